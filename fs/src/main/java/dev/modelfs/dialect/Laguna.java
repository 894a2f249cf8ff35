package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * Laguna as Ollama's converter writes it: Ollama's {@code detect_ollama_laguna} / {@code handle_laguna}
 * (docs/FORMATS.md §12.6). Markers: the nested SWA rope keys or a {@code blk.0.attn_g.weight}; the keys copied to
 * llama.cpp's names, the attention gates renamed {@code .attn_gate.weight}.
 */
public record Laguna() implements DialectHandler {
    @Override
    public String name() {
        return "laguna";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, "laguna") && (Markers.has(g, "laguna.rope.swa.dimension_count")
                || Markers.has(g, "laguna.rope.swa.freq_base") || g.tensor("blk.0.attn_g.weight") != null);
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.copy("laguna.rope.swa.dimension_count", "laguna.rope.dimension_count_swa", GgufValueType.UINT32);
        e.copy("laguna.rope.swa.freq_base", "laguna.rope.freq_base_swa", GgufValueType.FLOAT32);
        e.renameSuffix(".attn_g.weight", ".attn_gate.weight");
        return e.build(name(), face());
    }
}
