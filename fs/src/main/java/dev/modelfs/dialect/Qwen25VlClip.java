package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * The Qwen 2.5-VL vision tower and merger embedded in an Ollama {@code qwen25vl} file, for llama.cpp's clip loader
 * ({@code mmproj.gguf}): Ollama's {@code handle_qwen25vl_clip} (docs/FORMATS.md §12.11), step by step: the
 * {@code qwen25vl.vision.*} keys copied to {@code clip.vision.*} and the text width to {@code projection_dim}; the
 * feed-forward width taken from {@code v.blk.0.ffn_up.weight} when missing; the window-attention pattern
 * {@code n_wa_pattern} = {@code fullatt_block_indexes[0] + 1} (8 without the array); image size 560 and the CLIP
 * image statistics injected; SiLU, projector {@code qwen2.5vl_merger}; five tensor renames
 * ({@code v.merger.ln_q} to {@code v.post_ln}, {@code v.merger.mlp.0/2} to {@code mm.0/2}, the two temporal slices
 * {@code v.patch_embd_0/1} Ollama's converter split to {@code v.patch_embd.weight} / {@code .weight.1}), both slices
 * promoted to F32. Ollama's converter already split the QKV and the Conv3D patch embedding, so nothing is computed
 * but the promotions.
 *
 * <p>Where modelfs differs from Ollama's in-memory view: the file holds only what a projector file holds (the text
 * tensors, the {@code qwen25vl.*} and {@code tokenizer.*} keys are left out), and {@code clip.vision.num_channels} is
 * not written (Ollama's converter reads {@code in_chans}, 0 where a config names it {@code in_channels}; llama.cpp's
 * converter writes no such key and clip.cpp reads none). A header without the vision keys clip.cpp requires, or
 * without the merger and patch tensors, is refused as a whole.
 */
public record Qwen25VlClip() implements DialectHandler {
    /** {@code kMean} / {@code kStd} of handle_qwen25vl_clip (the CLIP statistics Qwen 2.5-VL's preprocessor uses). */
    private static final GgufArray MEAN = new GgufArray(GgufValueType.FLOAT32, List.of(0.48145466f, 0.4578275f, 0.40821073f));
    private static final GgufArray STD = new GgufArray(GgufValueType.FLOAT32, List.of(0.26862954f, 0.26130258f, 0.27577711f));
    static final int IMAGE_SIZE = 560;
    static final int WA_PATTERN = 8;
    private static final String P = Qwen25VlText.ARCH + ".";
    /** handle_qwen25vl_clip's rename_tensor calls, in its order. */
    private static final String[][] RENAMES = {{"v.merger.ln_q.weight", "v.post_ln.weight"}, {"v.merger.mlp.0.weight", "mm.0.weight"},
        {"v.merger.mlp.0.bias", "mm.0.bias"}, {"v.merger.mlp.2.weight", "mm.2.weight"}, {"v.merger.mlp.2.bias", "mm.2.bias"},
        {"v.patch_embd_0.weight", "v.patch_embd.weight"}, {"v.patch_embd_1.weight", "v.patch_embd.weight.1"}};

    @Override
    public String name() {
        return "qwen25vl (clip)";
    }

    @Override
    public Face face() {
        return Face.CLIP;
    }

    /** {@code translate_clip_metadata}: some {@code v.*} tensor, then {@code detect_ollama_qwen25vl}. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.anyTensorWithPrefix(g, "v.") && new Qwen25VlText().matches(g);
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.copy(P + "vision.attention.head_count", "clip.vision.attention.head_count", GgufValueType.UINT32);
        e.copy(P + "vision.attention.layer_norm_epsilon", "clip.vision.attention.layer_norm_epsilon", GgufValueType.FLOAT32);
        for (String k : new String[] {"block_count", "embedding_length", "patch_size", "spatial_merge_size", "window_size"}) {
            e.copy(P + "vision." + k, "clip.vision." + k, GgufValueType.UINT32);
        }
        e.copy(P + "embedding_length", "clip.vision.projection_dim", GgufValueType.UINT32);
        if (!e.has("clip.vision.feed_forward_length")) {
            GgufTensorInfo up = g.tensor("v.blk.0.ffn_up.weight");
            if (up != null && up.rank() >= 2) {
                e.set("clip.vision.feed_forward_length", GgufValueType.UINT32, (int) up.ne()[1]);
            }
        }
        GgufKv full = g.kv(P + "vision.fullatt_block_indexes");
        if (full != null && full.value() instanceof GgufArray a && !a.values().isEmpty()) {
            if (a.elementType() != GgufValueType.INT32 && a.elementType() != GgufValueType.UINT32) {
                throw new FormatException(full.key() + " is an array of " + a.elementType() + ", not INT32");
            }
            e.set("clip.vision.n_wa_pattern", GgufValueType.UINT32, ((Integer) a.values().get(0)) + 1);
        }
        e.inject("clip.vision.n_wa_pattern", GgufValueType.UINT32, WA_PATTERN);
        e.inject("clip.vision.image_size", GgufValueType.UINT32, IMAGE_SIZE);
        e.inject("clip.vision.image_mean", GgufValueType.ARRAY, MEAN);
        e.inject("clip.vision.image_std", GgufValueType.ARRAY, STD);
        e.inject("clip.has_vision_encoder", GgufValueType.BOOL, true);
        e.inject("clip.use_silu", GgufValueType.BOOL, true);
        e.set("clip.projector_type", GgufValueType.STRING, "qwen2.5vl_merger");
        e.set("general.architecture", GgufValueType.STRING, "clip");
        for (String required : new String[] {"clip.vision.block_count", "clip.vision.embedding_length", "clip.vision.attention.head_count",
                "clip.vision.patch_size", "clip.vision.projection_dim", "clip.vision.feed_forward_length"}) {
            if (!e.has(required)) {
                throw new FormatException("no " + required + " (" + P + "vision.* incomplete)");
            }
        }
        e.removeWithPrefix(P, "tokenizer.");
        e.keepOnlyPrefixes("text model (served in model.gguf)", "v.", "mm.");
        for (String[] r : RENAMES) {
            e.rename(r[0], r[1]);
        }
        for (String need : new String[] {"v.patch_embd.weight", "v.patch_embd.weight.1", "mm.0.weight", "mm.2.weight"}) {
            if (e.tensor(need) == null) {
                throw new FormatException("no " + need + " among the vision tensors");
            }
        }
        e.promoteToF32("v.patch_embd.weight");
        e.promoteToF32("v.patch_embd.weight.1");
        return e.build(name(), face());
    }
}
