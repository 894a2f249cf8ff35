package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * Laguna as Ollama's converter writes it: Ollama's {@code detect_ollama_laguna} / {@code handle_laguna}
 * (docs/FORMATS.md §12.6). Markers: the nested SWA rope keys or a {@code blk.0.attn_g.weight}; the keys copied to
 * llama.cpp's names, the attention gates renamed {@code .attn_gate.weight}; and, beyond Ollama's handler, YaRN's
 * attention factor restated as llama.cpp reads it ({@link #yarnAttnFactor}).
 */
public record Laguna() implements DialectHandler {
    static final String ATTN_FACTOR = "laguna.rope.scaling.attn_factor";

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
        yarnAttnFactor(g, e);
        return e.build(name(), face());
    }

    /**
     * Not in Ollama's {@code handle_laguna}: Ollama's converter writes {@code laguna.rope.scaling.attn_factor} as YaRN's
     * whole attention factor ({@code lagunaAttentionFactor}: the config's {@code attention_factor}, else
     * {@code 0.1 ln(factor) + 1}), where llama.cpp computes {@code 0.1 ln(factor) + 1} itself and multiplies by the key
     * as an extra factor. With YaRN and a factor above 1 the key becomes the stored value divided by
     * {@code 0.1 ln(factor) + 1}, removed when that is 1 (within an F32 rounding): llama.cpp's own conversion writes
     * none (found by the dialect fixture: the greedy tokens parted after four).
     */
    private static void yarnAttnFactor(GgufFile g, HeaderEdit e) {
        GgufKv attn = g.kv(ATTN_FACTOR);
        GgufKv factor = g.kv("laguna.rope.scaling.factor");
        if (!Markers.stringEquals(g, "laguna.rope.scaling.type", "yarn") || attn == null || factor == null
                || !(attn.value() instanceof Float a) || !(factor.value() instanceof Float f) || f <= 1f) {
            return;
        }
        double mscale = 0.1 * Math.log(f) + 1.0;
        double rest = a / mscale;
        if (Math.abs(rest - 1.0) <= 1e-6) {
            e.remove(ATTN_FACTOR);
        } else {
            e.set(ATTN_FACTOR, GgufValueType.FLOAT32, (float) rest);
        }
    }
}
