package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * The Pixtral vision tower and projector embedded in an Ollama mistral3 file, for llama.cpp's clip loader
 * ({@code mmproj.gguf}): Ollama's {@code handle_mistral3_clip} (docs/FORMATS.md §12.3). The {@code mistral3.vision.*}
 * keys copied to {@code clip.*}, Pixtral's defaults injected, projector type {@code pixtral},
 * {@code kMistral3ClipRenames} applied, and the vision q/k rows put in llama.cpp's order (Ollama's converter
 * permutes only the text ones), computed on read.
 *
 * <p>Two differences from Ollama's in-memory view, both to give the file llama.cpp's converter writes:
 * {@code v.token_embd.img_break} (which clip.cpp requires) is row {@code [IMG_BREAK]} of {@code token_embd.weight}
 * widened to F32, as the converter takes it, where Ollama zero-fills a reclaimed slot; and {@code v.patch_embd}
 * keeps its stored type (the converter writes F16; Ollama widens it for Metal). The text tensors and the
 * {@code mistral3.*} and {@code tokenizer.*} keys are left out.
 */
public record Mistral3Clip() implements DialectHandler {
    /** {@code kMistral3ClipRenames}, in Ollama's order. */
    private static final List<String[]> RENAMES = List.of(
            new String[] {"v.patch_conv", "v.patch_embd"},
            new String[] {"v.encoder_norm", "v.pre_ln"},
            new String[] {".attn_output", ".attn_out"},
            new String[] {".attn_norm", ".ln1"},
            new String[] {".ffn_norm", ".ln2"},
            new String[] {"mm.linear_1", "mm.1"},
            new String[] {"mm.linear_2", "mm.2"},
            new String[] {"mm.patch_merger.merging_layer", "mm.patch_merger"},
            new String[] {"mm.norm", "mm.input_norm"});
    /** Pixtral's image statistics ({@code kPixtralMean}, {@code kPixtralStd}). */
    private static final GgufArray MEAN = new GgufArray(GgufValueType.FLOAT32, List.of(0.48145467f, 0.4578275f, 0.40821072f));
    private static final GgufArray STD = new GgufArray(GgufValueType.FLOAT32, List.of(0.26862955f, 0.2613026f, 0.2757771f));
    private static final String IMG_BREAK = "[IMG_BREAK]";

    @Override
    public String name() {
        return "mistral3 (clip)";
    }

    @Override
    public Face face() {
        return Face.CLIP;
    }

    /** {@code translate_clip_metadata}: some {@code v.*} tensor, then {@code detect_ollama_mistral3}. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.anyTensorWithPrefix(g, "v.") && new Mistral3Text().matches(g);
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        for (String k : new String[] {"block_count", "embedding_length", "feed_forward_length", "attention.head_count", "image_size",
                "patch_size", "num_channels"}) {
            e.copy("mistral3.vision." + k, "clip.vision." + k, GgufValueType.UINT32);
        }
        e.copy("mistral3.spatial_merge_size", "clip.vision.spatial_merge_size", GgufValueType.UINT32);
        e.copy("mistral3.vision.rope.freq_base", "clip.rope.freq_base", GgufValueType.FLOAT32);
        e.copy("mistral3.embedding_length", "clip.vision.projection_dim", GgufValueType.UINT32);
        e.inject("clip.vision.attention.layer_norm_epsilon", GgufValueType.FLOAT32, 1e-5f);
        e.inject("clip.vision.image_mean", GgufValueType.ARRAY, MEAN);
        e.inject("clip.vision.image_std", GgufValueType.ARRAY, STD);
        e.inject("clip.has_vision_encoder", GgufValueType.BOOL, true);
        e.inject("clip.use_silu", GgufValueType.BOOL, true);
        e.set("clip.projector_type", GgufValueType.STRING, "pixtral");
        e.set("general.architecture", GgufValueType.STRING, "clip");
        for (String required : new String[] {"clip.vision.block_count", "clip.vision.embedding_length", "clip.vision.image_size",
                "clip.vision.patch_size", "clip.vision.attention.head_count", "clip.vision.projection_dim"}) {
            if (!e.has(required)) {
                throw new FormatException("no " + required + " (mistral3.vision.* incomplete)");
            }
        }
        int heads = Math.toIntExact(Markers.u32(g, "mistral3.vision.attention.head_count"));
        long blocks = Markers.u32(g, "mistral3.vision.block_count");
        long imgBreak = tokenId(g, IMG_BREAK);
        e.removeWithPrefix("mistral3.", "tokenizer.");
        e.keepOnlyPrefixes("text model (served in model.gguf)", "v.", "mm.");
        e.deriveRow("token_embd.weight", imgBreak, "v.token_embd.img_break", "row " + imgBreak + " (" + IMG_BREAK + ") of token_embd.weight");
        for (String[] r : RENAMES) {
            e.renameContaining(r[0], r[1]);
        }
        for (long b = 0; b < blocks; b++) {   // register_mistral3_vision_qk_permute, by the vision head count
            e.permuteQkRows("v.blk." + b + ".attn_q.weight", heads);
            e.permuteQkRows("v.blk." + b + ".attn_k.weight", heads);
        }
        for (String need : new String[] {"v.patch_embd.weight", "mm.1.weight", "mm.2.weight"}) {
            if (e.tensor(need) == null) {
                throw new FormatException("no " + need + " among the vision tensors");
            }
        }
        return e.build(name(), face());
    }

    /** The id of {@code token} in {@code tokenizer.ggml.tokens}. */
    private static long tokenId(GgufFile g, String token) {
        GgufKv kv = g.kv("tokenizer.ggml.tokens");
        if (kv != null && kv.value() instanceof GgufArray a) {
            int i = a.values().indexOf(token);
            if (i >= 0) {
                return i;
            }
        }
        throw new FormatException("no " + token + " token in tokenizer.ggml.tokens (the row of v.token_embd.img_break)");
    }
}
