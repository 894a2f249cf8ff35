package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * The vision tower and projector embedded in an Ollama gemma3 file, for llama.cpp's clip loader
 * ({@code mmproj.gguf}): Ollama's {@code handle_gemma3_clip} (docs/FORMATS.md §12.3). The {@code gemma3.vision.*}
 * keys copied to {@code clip.vision.*}, Gemma 3's defaults injected, {@code kGemma3ClipRenames} applied,
 * {@code v.patch_embd} and {@code v.position_embd} promoted from F16 to F32 (llama.cpp's converter stores them
 * as F32). Unlike Ollama's in-memory view, the file holds only what a projector file holds: the text
 * tensors and the {@code gemma3.*} and {@code tokenizer.*} keys are left out.
 */
public record Gemma3Clip() implements DialectHandler {
    /**
     * {@code kGemma3ClipRenames}, in Ollama's order, except that the SigLIP MLP gets llama.cpp's current names
     * ({@code fc1} the up projection): Ollama's table gives the legacy swapped names, which clip.cpp detects by
     * shape and swaps back when loading; the file served has the names llama.cpp's converter writes.
     */
    private static final List<String[]> RENAMES = List.of(
            new String[] {"v.patch_embedding", "v.patch_embd"},
            new String[] {"v.position_embedding", "v.position_embd"},
            new String[] {"v.post_layernorm", "v.post_ln"},
            new String[] {".layer_norm1", ".ln1"},
            new String[] {".layer_norm2", ".ln2"},
            new String[] {".attn_output", ".attn_out"},
            new String[] {".mlp.fc1", ".ffn_up"},     // Ollama: ffn_down, the legacy names clip.cpp swaps back
            new String[] {".mlp.fc2", ".ffn_down"},   // Ollama: ffn_up
            new String[] {"mm.mm_input_projection", "mm.input_projection"},
            new String[] {"mm.mm_soft_emb_norm", "mm.soft_emb_norm"});

    @Override
    public String name() {
        return "gemma3 (clip)";
    }

    @Override
    public Face face() {
        return Face.CLIP;
    }

    /** {@code translate_clip_metadata}: some {@code v.*} tensor, then {@code detect_ollama_gemma3}. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.anyTensorWithPrefix(g, "v.") && Markers.architecture(g, "gemma3") && Gemma3Text.quirks(g);
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        for (String k : new String[] {"block_count", "embedding_length", "feed_forward_length", "image_size", "patch_size",
                "attention.head_count"}) {
            e.copy("gemma3.vision." + k, "clip.vision." + k, GgufValueType.UINT32);
        }
        e.copy("gemma3.vision.attention.layer_norm_epsilon", "clip.vision.attention.layer_norm_epsilon", GgufValueType.FLOAT32);
        e.copy("gemma3.embedding_length", "clip.vision.projection_dim", GgufValueType.UINT32);
        GgufArray half = new GgufArray(GgufValueType.FLOAT32, List.of(0.5f, 0.5f, 0.5f));
        e.inject("clip.vision.image_mean", GgufValueType.ARRAY, half);
        e.inject("clip.vision.image_std", GgufValueType.ARRAY, half);
        e.inject("clip.has_vision_encoder", GgufValueType.BOOL, true);
        e.inject("clip.use_gelu", GgufValueType.BOOL, true);
        e.set("clip.projector_type", GgufValueType.STRING, "gemma3");
        e.set("general.architecture", GgufValueType.STRING, "clip");
        for (String required : new String[] {"clip.vision.block_count", "clip.vision.embedding_length", "clip.vision.image_size",
                "clip.vision.patch_size", "clip.vision.attention.head_count", "clip.vision.projection_dim"}) {
            if (!e.has(required)) {
                throw new FormatException("no " + required + " (gemma3.vision.* incomplete)");
            }
        }
        e.removeWithPrefix("gemma3.", "tokenizer.");
        e.keepOnlyPrefixes("text model (served in model.gguf)", "v.", "mm.");
        for (String[] r : RENAMES) {
            e.renameContaining(r[0], r[1]);
        }
        for (String need : new String[] {"v.patch_embd.weight", "v.position_embd.weight", "mm.input_projection.weight"}) {
            if (e.tensor(need) == null) {
                throw new FormatException("no " + need + " among the vision tensors");
            }
        }
        e.promoteToF32("v.patch_embd.weight");
        e.promoteToF32("v.position_embd.weight");
        return e.build(name(), face());
    }
}
