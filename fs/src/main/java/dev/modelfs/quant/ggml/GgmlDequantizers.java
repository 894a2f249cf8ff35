package dev.modelfs.quant.ggml;

import dev.modelfs.quant.BlockDequantizer;

/**
 * GGML tensor element types → f32 dequantization kernels, bit-exact with ggml's
 * {@code dequantize_row_*} (docs/FORMATS.md §6.2/§6.4).
 *
 * <p>Every kernel is a stateless, thread-safe singleton; {@link BlockDequantizer#dequantize} checks
 * its arguments up front (throwing {@link IndexOutOfBoundsException} before writing anything when a
 * range does not fit its segment) and allocates nothing.
 */
public final class GgmlDequantizers {
    private GgmlDequantizers() {}

    /** ggml_type ids (docs/FORMATS.md §6.2). */
    public static final int F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
            Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15, IQ2_XXS = 16, IQ2_XS = 17,
            IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23, I8 = 24, I16 = 25,
            I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30, TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
            NVFP4 = 40, Q1_0 = 41, Q2_0 = 42;

    /**
     * Kernel for a GGML type id (ids of docs/FORMATS.md §6.2): F32(0), F16(1), BF16(30), F64(28) and every
     * quantized type: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, MXFP4,
     * NVFP4, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, Q1_0, Q2_0, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
     * IQ1_M. The plain types are "blocks" of one element.
     *
     * @throws IllegalArgumentException for the integer types (I8..I64) and unknown or removed ids
     */
    public static BlockDequantizer forTypeId(int ggmlTypeId) {
        return switch (ggmlTypeId) {
            case F32 -> PlainKernels.F32_K;
            case F16 -> PlainKernels.F16_K;
            case BF16 -> PlainKernels.BF16_K;
            case F64 -> PlainKernels.F64_K;
            case Q4_0 -> LegacyKernels.Q4_0_K;
            case Q4_1 -> LegacyKernels.Q4_1_K;
            case Q5_0 -> LegacyKernels.Q5_0_K;
            case Q5_1 -> LegacyKernels.Q5_1_K;
            case Q8_0 -> LegacyKernels.Q8_0_K;
            case Q8_1 -> LegacyKernels.Q8_1_K;
            case Q1_0 -> LegacyKernels.Q1_0_K;
            case Q2_0 -> LegacyKernels.Q2_0_K;
            case IQ4_NL -> LegacyKernels.IQ4_NL_K;
            case MXFP4 -> LegacyKernels.MXFP4_K;
            case NVFP4 -> LegacyKernels.NVFP4_K;
            case Q2_K -> KQuantKernels.Q2_K_K;
            case Q3_K -> KQuantKernels.Q3_K_K;
            case Q4_K -> KQuantKernels.Q4_K_K;
            case Q5_K -> KQuantKernels.Q5_K_K;
            case Q6_K -> KQuantKernels.Q6_K_K;
            case Q8_K -> KQuantKernels.Q8_K_K;
            case IQ4_XS -> KQuantKernels.IQ4_XS_K;
            case TQ1_0 -> KQuantKernels.TQ1_0_K;
            case TQ2_0 -> KQuantKernels.TQ2_0_K;
            case IQ2_XXS -> IqGridKernels.IQ2_XXS_K;
            case IQ2_XS -> IqGridKernels.IQ2_XS_K;
            case IQ2_S -> IqGridKernels.IQ2_S_K;
            case IQ3_XXS -> IqGridKernels.IQ3_XXS_K;
            case IQ3_S -> IqGridKernels.IQ3_S_K;
            case IQ1_S -> IqGridKernels.IQ1_S_K;
            case IQ1_M -> IqGridKernels.IQ1_M_K;
            case I8, I16, I32, I64 -> throw new IllegalArgumentException(
                    "GGML integer type " + ggmlTypeId + " has no f32 dequantization");
            default -> throw new IllegalArgumentException("unknown or unsupported GGML type id " + ggmlTypeId);
        };
    }
}
