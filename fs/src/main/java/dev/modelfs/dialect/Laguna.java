package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.Set;

/**
 * Laguna as Ollama's converter writes it: Ollama's {@code detect_ollama_laguna} / {@code handle_laguna}
 * (docs/FORMATS.md §12.6). Markers: the nested SWA rope keys or a {@code blk.0.attn_g.weight}; the keys copied to
 * llama.cpp's names, the attention gates renamed {@code .attn_gate.weight}; and, beyond Ollama's handler, the
 * full-attention rope type made one llama.cpp's loader knows ({@link #ropeScalingType}) and YaRN's attention factor
 * restated as llama.cpp reads it ({@link #yarnAttnFactor}).
 */
public record Laguna() implements DialectHandler {
    static final String ATTN_FACTOR = "laguna.rope.scaling.attn_factor";
    static final String SCALING_TYPE = "laguna.rope.scaling.type";
    static final String SCALING_FACTOR = "laguna.rope.scaling.factor";
    /** The rope scaling types llama.cpp's loader reads ({@code LLAMA_ROPE_SCALING_TYPES}); any other aborts it. */
    private static final Set<String> UPSTREAM_TYPES = Set.of("none", "linear", "yarn", "longrope");

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
        ropeScalingType(g, e);
        yarnAttnFactor(g, e);
        return e.build(name(), face());
    }

    /**
     * Not in Ollama's {@code handle_laguna}: Ollama's converter writes the checkpoint's full-attention {@code rope_type}
     * as {@code laguna.rope.scaling.type} as it is, {@code "default"} (or {@code ""} when the config names none) for
     * plain RoPE, and {@code laguna.rope.scaling.factor} as the config's factor or 1; llama.cpp's loader aborts
     * ({@code GGML_ASSERT} on {@code LLAMA_ROPE_SCALING_TYPE_UNSPECIFIED}) on a type it does not know. For plain RoPE both
     * keys are removed, as llama.cpp's converter writes neither for {@code "default"} (its loader then reads linear
     * scaling by 1: plain RoPE); any other unknown type is refused (served as stored, docs/FORMATS.md §12.1).
     */
    private static void ropeScalingType(GgufFile g, HeaderEdit e) {
        GgufKv type = g.kv(SCALING_TYPE);
        if (type == null) {
            return;
        }
        if (!(type.value() instanceof String s)) {
            throw new FormatException(SCALING_TYPE + " is " + type.type() + ", not a STRING");
        }
        if (s.isEmpty() || s.equals("default")) {
            e.remove(SCALING_TYPE);
            e.remove(SCALING_FACTOR);
        } else if (!UPSTREAM_TYPES.contains(s)) {
            throw new FormatException(SCALING_TYPE + " is \"" + s + "\", which llama.cpp's loader does not know (none, linear, yarn, longrope)");
        }
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
