package dev.modelfs.quant.ggml;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.quant.BlockDequantizer;
import dev.modelfs.quant.Kernels;
import java.util.Objects;

/**
 * GGML tensor element types ({@link GgmlType}, the one table of ids and block sizes) → f32
 * dequantization kernels, bit-exact with ggml's {@code dequantize_row_*} (docs/FORMATS.md §6.2/§6.4).
 *
 * <p>Every kernel is a stateless, thread-safe singleton; {@link BlockDequantizer#dequantize} checks
 * its arguments up front (throwing {@link IndexOutOfBoundsException} before writing anything when a
 * range does not fit its segment) and allocates nothing.
 *
 * <p>Two implementations ({@link Kernels.Impl}): plain loops for every type, and Vector API kernels for F16, BF16,
 * Q4_0, Q4_1, Q8_0, Q4_K, Q5_K and Q6_K. Both write identical bytes; the other types use their scalar kernel under
 * either. The Vector API classes are linked only when a {@link Kernels.Impl#VECTOR} kernel is asked for.
 */
public final class GgmlDequantizers {
    private GgmlDequantizers() {}

    /**
     * Kernel for a GGML type: F32, F16, BF16, F64 and every quantized type of {@link GgmlType}. The plain
     * types are "blocks" of one element; a kernel's block sizes are its type's.
     *
     * <p>The implementation is this JVM's ({@link Kernels#active()}).
     *
     * @throws IllegalArgumentException for the integer types (I8..I64), which have no f32 dequantization
     */
    public static BlockDequantizer forType(GgmlType type) {
        return forType(type, Kernels.active());
    }

    /**
     * Kernel for a GGML type in the given implementation (for tests and benchmarks; the file system uses
     * {@link #forType(GgmlType)}). Types without a Vector API kernel get their scalar kernel under both.
     *
     * @throws IllegalArgumentException for the integer types (I8..I64)
     * @throws IllegalStateException for {@link Kernels.Impl#VECTOR} when this JVM cannot run Vector API kernels
     */
    public static BlockDequantizer forType(GgmlType type, Kernels.Impl impl) {
        Objects.requireNonNull(type, "type");
        if (Kernels.isVector(impl)) {
            final BlockDequantizer vector = type.isInteger() ? null : GgmlVectorKernels.forType(type);
            if (vector != null) {
                return vector;
            }
        }
        return scalar(type);
    }

    private static BlockDequantizer scalar(GgmlType type) {
        return switch (type) {
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
                    "GGML integer type " + type + " has no f32 dequantization");
        };
    }
}
