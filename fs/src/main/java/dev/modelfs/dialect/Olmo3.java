package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * OLMo 3 as Ollama's converter writes it: Ollama's {@code handle_olmo3} (docs/FORMATS.md §12.6). llama.cpp has no
 * {@code olmo3} architecture; its {@code olmo2} loader reads the same tensors (with OLMo 3's sliding windows), so the
 * architecture is renamed and the {@code olmo3.*} keys are copied to {@code olmo2.*}. Marker: the architecture.
 */
public record Olmo3() implements DialectHandler {
    @Override
    public String name() {
        return "olmo3";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, "olmo3");
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.renameArchitecture("olmo3", "olmo2");
        return e.build(name(), face());
    }
}
