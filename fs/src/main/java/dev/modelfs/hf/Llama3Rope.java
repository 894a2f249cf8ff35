package dev.modelfs.hf;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.arch.Architecture;
import dev.modelfs.arch.ConfigKeys;
import dev.modelfs.arch.RopeFreqs;
import java.util.Optional;

/**
 * The {@code config.json} {@code rope_scaling} of a Llama 3.x GGUF, recovered from its
 * {@code rope_freqs.weight} (the per-frequency factors llama.cpp's converter computes from it,
 * {@link RopeFreqs}): the factor is the largest value, the frequency factors and the original context
 * are Meta's (1, 4, {@code rope.scaling.original_context_length} or 8192), and the recomputed tensor
 * must equal the stored one (to 1e-5 relative: the converter evaluates powers in f32), else the model
 * is refused.
 */
final class Llama3Rope {
    private Llama3Rope() {}

    static final float LOW = 1f, HIGH = 4f;
    static final int ORIGINAL = 8192;

    static ObjectNode scaling(GgufMeta m, Architecture arch, float[] freqs, int headDim) {
        String why = "rope_freqs.weight (Llama 3.x rope scaling)";
        if (arch != Architecture.LLAMA) {
            throw new HfUnsupported(why + " in a " + arch.ggufName() + " model");
        }
        if (freqs == null || freqs.length == 0) {
            throw new HfUnsupported(why + ": not an F32 vector modelfs could read");
        }
        int dims = (int) (long) m.integer("llama.rope.dimension_count", (long) headDim);
        float base = (float) (double) m.real("llama.rope.freq_base", 10000.0);
        int original = (int) (long) m.integer("llama.rope.scaling.original_context_length", (long) ORIGINAL);
        float factor = 0;
        for (float f : freqs) {
            factor = Math.max(factor, f);
        }
        float[] want;
        try {
            want = RopeFreqs.llama3(new ConfigKeys.RopeScaling("llama3", factor, Optional.of(original), LOW, HIGH), base, dims);
        } catch (IllegalArgumentException e) {
            throw new HfUnsupported(why + ": " + e.getMessage());
        }
        boolean same = want.length == freqs.length;
        for (int i = 0; same && i < want.length; i++) {
            same = Math.abs(want[i] - freqs[i]) <= 1e-5f * Math.abs(want[i]);
        }
        if (!same) {
            throw new HfUnsupported(why + " is not llama3 scaling with factor " + factor + ", frequency factors "
                    + LOW + "/" + HIGH + " and original context " + original);
        }
        ObjectNode r = JsonNodeFactory.instance.objectNode();
        r.put("rope_type", "llama3");
        r.put("factor", Double.parseDouble(Float.toString(factor)));
        r.put("low_freq_factor", (double) LOW);
        r.put("high_freq_factor", (double) HIGH);
        r.put("original_max_position_embeddings", original);
        return r;
    }
}
