package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * A LLaVA/BakLLaVA projector layer without {@code clip.projector_type}: Ollama's
 * {@code needs_default_llava_projector_type} and {@code handle_missing_llava_projector_type}
 * (docs/FORMATS.md §12.5). The type is set to {@code mlp}; nothing else changes.
 */
public record ClipProjectorType() implements DialectHandler {

    @Override
    public String name() {
        return "clip projector type";
    }

    @Override
    public Face face() {
        return Face.CLIP;
    }

    @Override
    public boolean matches(GgufFile g) {
        GgufKv vision = g.kv("clip.has_vision_encoder");
        return Markers.architecture(g, "clip") && vision != null && Boolean.TRUE.equals(vision.value())
                && !Markers.has(g, "clip.projector_type") && !Markers.has(g, "clip.vision.projector_type");
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.set("clip.projector_type", GgufValueType.STRING, "mlp");
        return e.build(name(), face());
    }
}
