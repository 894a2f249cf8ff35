package dev.modelfs.arch;

/**
 * The {@code rope_freqs.weight} tensor llama.cpp uses for Llama 3.x rope scaling ({@code rope_type
 * "llama3"}), computed as {@code convert_hf_to_gguf.py} {@code LlamaModel.generate_extra_tensors} does
 * (docs/FORMATS.md §7.3): one F32 factor per rotary frequency pair.
 *
 * <p>Invariants: the result has {@code headDim / 2} elements, each in {@code [1, factor]} for
 * {@code factor >= 1}; computed in f32 except {@code base^x}, which is evaluated in f64 and rounded once
 * (torch evaluates it in f32, so single factors may differ from the converter's by an ulp).
 */
public final class RopeFreqs {

    private RopeFreqs() {
    }

    /**
     * The llama3 factors for rope base {@code base} and head dimension {@code headDim} (even, positive).
     *
     * @throws IllegalArgumentException for a bad head dimension or equal low/high frequency factors
     */
    public static float[] llama3(ConfigKeys.RopeScaling r, float base, int headDim) {
        if (headDim <= 0 || headDim % 2 != 0 || r.lowFreqFactor() == r.highFreqFactor()) {
            throw new IllegalArgumentException("llama3 rope scaling: head_dim " + headDim + ", low/high factors "
                    + r.lowFreqFactor() + "/" + r.highFreqFactor());
        }
        float oldContext = r.originalContext().orElse(8192);
        float lowWavelen = oldContext / r.lowFreqFactor();
        float highWavelen = oldContext / r.highFreqFactor();
        float[] out = new float[headDim / 2];
        for (int i = 0; i < out.length; i++) {
            float exponent = (float) (2 * i) / headDim;
            float freq = 1.0f / (float) Math.pow(base, exponent);
            float wavelen = (float) (2 * Math.PI) / freq;
            if (wavelen < highWavelen) {
                out[i] = 1.0f;
            } else if (wavelen > lowWavelen) {
                out[i] = r.factor();
            } else {
                float smooth = (oldContext / wavelen - r.lowFreqFactor()) / (r.highFreqFactor() - r.lowFreqFactor());
                out[i] = 1.0f / ((1 - smooth) / r.factor() + smooth);
            }
        }
        return out;
    }
}
