package dev.modelfs.convert;

/**
 * A function applied to every f32 value of a tensor by {@link UnitSource.Shifted}, in f32 (computed in double
 * where Java's math library works in double, then rounded once to f32): the per-element undoing (or doing) of what
 * llama.cpp's converter does to a tensor (docs/FORMATS.md §7.3). A closed family; each member says which
 * conversion it serves.
 */
public sealed interface ElementFunction permits ElementFunction.Add, ElementFunction.NegExp, ElementFunction.LogOfNeg {

    /** The function's value at {@code x}. */
    float apply(float x);

    /**
     * {@code x + c}: the norm weights llama.cpp stores as {@code 1 + w} (Gemma, Qwen3.5), {@code c = ±1}. Its
     * {@link #toString()} is the constant's ({@code "+ -1.0"}).
     */
    record Add(float c) implements ElementFunction {
        @Override
        public float apply(float x) {
            return x + c;
        }

        @Override
        public String toString() {
            return "+ " + c;
        }
    }

    /**
     * {@code -exp(x)}: llama.cpp's {@code ssm_a} from a gated delta-net's {@code A_log} (Qwen3.5's linear-attention
     * layers: {@code ssm_a = -exp(A_log)}, safetensors → GGUF).
     */
    record NegExp() implements ElementFunction {
        @Override
        public float apply(float x) {
            return (float) -Math.exp(x);
        }

        @Override
        public String toString() {
            return "-exp(x)";
        }
    }

    /**
     * {@code log(-x)}: a gated delta-net's {@code A_log} from llama.cpp's {@code ssm_a} (the inverse of {@link NegExp},
     * GGUF → Hugging Face); NaN for {@code x >= 0}'s positive part and {@code -inf} at {@code -0}, as the formula says.
     */
    record LogOfNeg() implements ElementFunction {
        @Override
        public float apply(float x) {
            return (float) Math.log(-(double) x);
        }

        @Override
        public String toString() {
            return "log(-x)";
        }
    }
}
