package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * The GLM-OCR vision tower and projector embedded in an Ollama {@code glmocr} file, for llama.cpp's clip loader
 * ({@code mmproj.gguf}): Ollama's {@code handle_glmocr_clip} (docs/FORMATS.md §12.15). Ollama's converter already wrote
 * the tower under llama.cpp's GLM4V names ({@code v.blk.N.{ln1, ln2, attn_qkv, attn_out, attn_q_norm, attn_k_norm,
 * ffn_gate, ffn_up, ffn_down}}, {@code v.post_ln}, {@code mm.patch_merger}, {@code mm.model.fc}, {@code mm.post_norm},
 * {@code mm.gate/up/down}) and split the Conv3D patch embedding into its two temporal slices {@code v.patch_embd_0/1}:
 * the {@code glmocr.vision.*} keys are copied to {@code clip.vision.*} ({@code intermediate_size} as
 * {@code feed_forward_length}, {@code out_hidden_size} as {@code projection_dim}), the image statistics copied, SiLU and
 * projector {@code glm4v} set, and the two slices renamed {@code v.patch_embd.weight} / {@code .weight.1}.
 *
 * <p>Where modelfs differs from Ollama's in-memory view: the file holds only what a projector file holds (the text
 * tensors, the {@code glmocr.*} and {@code tokenizer.*} keys left out), and the patch slices keep their stored type
 * (llama.cpp's converter writes them F16; Ollama widens them to F32 for Metal), so every tensor is a slice of the blob.
 * A header without the vision keys clip.cpp requires, with a vision key or image statistic of another type, or without
 * the patch slices or the projector's tensors, is refused as a whole.
 */
public record GlmOcrClip() implements DialectHandler {
    private static final String P = GlmOcrText.ARCH + ".";
    /** handle_glmocr_clip's copy_u32_kv calls: glmocr.vision.X to clip.vision.Y. */
    private static final String[][] U32 = {{"block_count", "block_count"}, {"embedding_length", "embedding_length"},
        {"intermediate_size", "feed_forward_length"}, {"attention.head_count", "attention.head_count"}, {"image_size", "image_size"},
        {"patch_size", "patch_size"}, {"spatial_merge_size", "spatial_merge_size"}, {"out_hidden_size", "projection_dim"}};
    /** The GLM4V tensors clip.cpp loads without a fallback (besides the blocks'). */
    private static final String[] REQUIRED = {"v.patch_embd.weight", "v.patch_embd.weight.1", "mm.model.fc.weight", "mm.up.weight",
        "mm.gate.weight", "mm.down.weight", "mm.post_norm.weight", "mm.patch_merger.weight", "mm.patch_merger.bias"};

    @Override
    public String name() {
        return "glmocr (clip)";
    }

    @Override
    public Face face() {
        return Face.CLIP;
    }

    /** {@code translate_clip_metadata}: some {@code v.*} tensor, then {@code detect_ollama_glmocr}. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.anyTensorWithPrefix(g, "v.") && new GlmOcrText().matches(g);
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        for (String[] k : U32) {
            e.copy(P + "vision." + k[0], "clip.vision." + k[1], GgufValueType.UINT32);
        }
        e.copy(P + "vision.attention.layer_norm_rms_epsilon", "clip.vision.attention.layer_norm_epsilon", GgufValueType.FLOAT32);
        for (String stat : new String[] {"image_mean", "image_std"}) {
            GgufKv kv = g.kv(P + "vision." + stat);
            if (kv != null && !(kv.value() instanceof GgufArray a && a.elementType() == GgufValueType.FLOAT32)) {
                throw new FormatException(kv.key() + " is not a FLOAT32 array");
            }
            e.copy(P + "vision." + stat, "clip.vision." + stat);
        }
        e.inject("clip.has_vision_encoder", GgufValueType.BOOL, true);
        e.inject("clip.use_silu", GgufValueType.BOOL, true);
        e.set("clip.projector_type", GgufValueType.STRING, "glm4v");
        e.set("general.architecture", GgufValueType.STRING, "clip");
        for (String required : new String[] {"clip.vision.block_count", "clip.vision.embedding_length", "clip.vision.attention.head_count",
                "clip.vision.patch_size", "clip.vision.image_size", "clip.vision.projection_dim", "clip.vision.feed_forward_length"}) {
            if (!e.has(required)) {
                throw new FormatException("no " + required + " (" + P + "vision.* incomplete)");
            }
        }
        e.removeWithPrefix(P, "tokenizer.");
        e.keepOnlyPrefixes("text model (served in model.gguf)", "v.", "mm.");
        e.rename("v.patch_embd_0.weight", "v.patch_embd.weight");
        e.rename("v.patch_embd_1.weight", "v.patch_embd.weight.1");
        for (String need : REQUIRED) {
            if (e.tensor(need) == null) {
                throw new FormatException("no " + need + " among the vision tensors");
            }
        }
        return e.build(name(), face());
    }
}
