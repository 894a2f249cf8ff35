package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * The vision tower, projector and audio encoder embedded in an Ollama gemma4 file, for llama.cpp's clip loader
 * ({@code mmproj.gguf}): Ollama's {@code handle_gemma4_clip} (docs/FORMATS.md §12.9). The
 * {@code gemma4.vision.*} keys copied to {@code clip.vision.*}, Gemma 4's defaults injected (image size 224,
 * mean 0 and std 1: the model normalizes each image itself), projector type {@code gemma4v}, the patch embedding
 * promoted from F16 to F32. Ollama's converter already writes the vision tensor names llama.cpp's converter writes,
 * so nothing of the vision tower is renamed. An embedded audio encoder ({@code a.*}, {@code mm.a.*}) joins the same
 * file as projector type {@code gemma4a} ({@link Gemma4AudioClip}), or is left out with the reason when its keys or
 * tensors are incomplete. Like {@link Gemma3Clip}, the file holds only what a projector file holds: the text
 * tensors and the {@code gemma4.*} and {@code tokenizer.*} keys are left out.
 */
public record Gemma4Clip() implements DialectHandler {
    @Override
    public String name() {
        return "gemma4 (clip)";
    }

    @Override
    public Face face() {
        return Face.CLIP;
    }

    /** {@code translate_clip_metadata}: some {@code v.*} tensor, then {@code detect_ollama_gemma4}. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.anyTensorWithPrefix(g, "v.") && Markers.architecture(g, "gemma4") && Gemma4Text.quirks(g);
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.set("general.architecture", GgufValueType.STRING, "clip");
        for (String k : new String[] {"block_count", "embedding_length", "feed_forward_length", "attention.head_count"}) {
            e.copy("gemma4.vision." + k, "clip.vision." + k, GgufValueType.UINT32);
        }
        e.copy("gemma4.vision.attention.layer_norm_epsilon", "clip.vision.attention.layer_norm_epsilon", GgufValueType.FLOAT32);
        e.copy("gemma4.vision.patch_size", "clip.vision.patch_size", GgufValueType.UINT32);
        e.inject("clip.vision.image_size", GgufValueType.UINT32, 224);
        e.copy("gemma4.embedding_length", "clip.vision.projection_dim", GgufValueType.UINT32);
        e.inject("clip.vision.image_mean", GgufValueType.ARRAY, new GgufArray(GgufValueType.FLOAT32, List.of(0f, 0f, 0f)));
        e.inject("clip.vision.image_std", GgufValueType.ARRAY, new GgufArray(GgufValueType.FLOAT32, List.of(1f, 1f, 1f)));
        e.inject("clip.has_vision_encoder", GgufValueType.BOOL, true);
        e.set("clip.vision.projector_type", GgufValueType.STRING, "gemma4v");
        for (String required : new String[] {"clip.vision.block_count", "clip.vision.embedding_length", "clip.vision.feed_forward_length",
                "clip.vision.attention.head_count", "clip.vision.patch_size", "clip.vision.projection_dim"}) {
            if (!e.has(required)) {
                throw new FormatException("no " + required + " (gemma4.vision.* incomplete)");
            }
        }
        if (Gemma4AudioClip.present(g)) {
            String problem = Gemma4AudioClip.problem(g);
            if (problem == null) {
                Gemma4AudioClip.translate(e, g);
            } else {
                e.dropWithPrefix("a.", "audio encoder left out: " + problem);
                e.dropWithPrefix("mm.a.", "audio embedder left out: " + problem);
            }
        } else {
            e.dropWithPrefix("mm.a.", "audio embedder without an audio encoder");
        }
        e.removeWithPrefix("gemma4.", "tokenizer.");
        e.keepOnlyPrefixes("text model (served in model.gguf)", "v.", "mm.", "a.");
        for (String need : new String[] {"v.patch_embd.weight", "v.position_embd.weight", "mm.input_projection.weight"}) {
            if (e.tensor(need) == null) {
                throw new FormatException("no " + need + " among the vision tensors");
            }
        }
        e.promoteToF32("v.patch_embd.weight");
        return e.build(name(), face());
    }
}
