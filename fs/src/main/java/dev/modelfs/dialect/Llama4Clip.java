package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * The Llama 4 vision tower and projector embedded in an Ollama llama4 file, for llama.cpp's clip loader
 * ({@code mmproj.gguf}): Ollama's {@code handle_llama4_clip} (docs/FORMATS.md §12.13). The {@code llama4.vision.*} keys
 * copied to {@code clip.vision.*}, the pixel-shuffle ratio turned into {@code clip.vision.projector.scale_factor}
 * ({@code round(1 / ratio)}, 2 when absent or not positive), Llama 4's image statistics (0.5) injected, projector type
 * {@code llama4}; {@code v.positional_embedding_vlm} (no {@code .weight} in Ollama's files) renamed exactly, then
 * {@code kLlama4ClipRenames} in order. No tensor data changes. As in {@link Mistral3Clip}, the file holds only what a
 * projector file holds: the text tensors and the {@code llama4.*} and {@code tokenizer.*} keys are left out.
 */
public record Llama4Clip() implements DialectHandler {
    /** {@code kLlama4ClipRenames}, in Ollama's order (the adapter MLP before the generic {@code .mlp.fc*}). */
    private static final List<String[]> RENAMES = List.of(
            new String[] {"v.vision_adapter.mlp.fc1", "mm.model.mlp.1"},
            new String[] {"v.vision_adapter.mlp.fc2", "mm.model.mlp.2"},
            new String[] {"mm.linear_1", "mm.model.fc"},
            new String[] {"v.class_embedding", "v.class_embd"},
            new String[] {"v.layernorm_post", "v.post_ln"},
            new String[] {"v.layernorm_pre", "v.pre_ln"},
            new String[] {"v.patch_embedding", "v.patch_embd"},
            new String[] {".attn_output", ".attn_out"},
            new String[] {".attn_norm", ".ln1"},
            new String[] {".ffn_norm", ".ln2"},
            new String[] {".mlp.fc1", ".ffn_up"},
            new String[] {".mlp.fc2", ".ffn_down"});
    private static final GgufArray HALF = new GgufArray(GgufValueType.FLOAT32, List.of(0.5f, 0.5f, 0.5f));

    @Override
    public String name() {
        return "llama4 (clip)";
    }

    @Override
    public Face face() {
        return Face.CLIP;
    }

    /** {@code translate_clip_metadata}: some {@code v.*} tensor, then {@code detect_ollama_llama4}. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.anyTensorWithPrefix(g, "v.") && new Llama4Text().matches(g);
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        for (String k : new String[] {"block_count", "embedding_length", "feed_forward_length", "attention.head_count", "image_size",
                "patch_size"}) {
            e.copy("llama4.vision." + k, "clip.vision." + k, GgufValueType.UINT32);
        }
        e.copy("llama4.vision.layer_norm_epsilon", "clip.vision.attention.layer_norm_epsilon", GgufValueType.FLOAT32);
        e.copy("llama4.embedding_length", "clip.vision.projection_dim", GgufValueType.UINT32);
        e.inject("clip.vision.projector.scale_factor", GgufValueType.UINT32, scaleFactor(g));
        e.inject("clip.vision.image_mean", GgufValueType.ARRAY, HALF);
        e.inject("clip.vision.image_std", GgufValueType.ARRAY, HALF);
        e.inject("clip.has_vision_encoder", GgufValueType.BOOL, true);
        e.inject("clip.use_gelu", GgufValueType.BOOL, true);
        e.set("clip.projector_type", GgufValueType.STRING, "llama4");
        e.set("clip.vision.projector_type", GgufValueType.STRING, "llama4");
        e.set("general.architecture", GgufValueType.STRING, "clip");
        for (String required : new String[] {"clip.vision.block_count", "clip.vision.embedding_length", "clip.vision.image_size",
                "clip.vision.patch_size", "clip.vision.attention.head_count", "clip.vision.projection_dim"}) {
            if (!e.has(required)) {
                throw new FormatException("no " + required + " (llama4.vision.* incomplete)");
            }
        }
        e.removeWithPrefix("llama4.", "tokenizer.");
        e.keepOnlyPrefixes("text model (served in model.gguf)", "v.", "mm.");
        e.rename("v.positional_embedding_vlm", "v.position_embd.weight");
        for (String[] r : RENAMES) {
            e.renameContaining(r[0], r[1]);
        }
        for (String need : new String[] {"v.patch_embd.weight", "v.position_embd.weight", "mm.model.fc.weight"}) {
            if (e.tensor(need) == null) {
                throw new FormatException("no " + need + " among the vision tensors");
            }
        }
        return e.build(name(), face());
    }

    /** {@code round(1 / llama4.vision.pixel_shuffle_ratio)}, 2 when the ratio is absent, not positive or rounds to 0. */
    static int scaleFactor(GgufFile g) {
        GgufKv kv = g.kv("llama4.vision.pixel_shuffle_ratio");
        if (kv == null) {
            return 2;
        }
        if (kv.type() != GgufValueType.FLOAT32) {
            throw new FormatException("llama4.vision.pixel_shuffle_ratio is " + kv.type() + ", not FLOAT32");
        }
        float ratio = (Float) kv.value();
        if (!(ratio > 0f)) {
            return 2;
        }
        int s = Math.round(1.0f / ratio);
        return s <= 0 ? 2 : s;
    }
}
