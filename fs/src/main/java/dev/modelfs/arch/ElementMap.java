package dev.modelfs.arch;

/**
 * A per-element function between the values llama.cpp's converter stores and the Hugging Face ones, beyond a norm
 * shift ({@link ArchSpec#normShift}), named here (the {@code arch} package imports no converter) and applied by the views
 * as {@code convert.ElementFunction}s (docs/FORMATS.md §7.3).
 */
public enum ElementMap {
    /** The stored values. */
    NONE,
    /** {@code log(-x)}: a gated delta-net's {@code A_log} from llama.cpp's {@code ssm_a = -exp(A_log)} (GGUF → Hugging Face). */
    LOG_OF_NEG,
    /** {@code -exp(x)}: llama.cpp's {@code ssm_a} from a gated delta-net's {@code A_log} (Hugging Face → GGUF). */
    NEG_EXP
}
