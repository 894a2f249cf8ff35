package dev.modelfs.quant.ggml;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.quant.BlockDequantizer;

/**
 * The GGML types with a Vector API kernel, and those kernels. Only {@link GgmlDequantizers} calls this, and only when
 * the Vector API kernels are asked for: this class is the one door to the classes that link
 * {@code jdk.incubator.vector}, so a JVM without that module never loads them.
 */
final class GgmlVectorKernels {
    private GgmlVectorKernels() {}

    /** The Vector API kernel for {@code type}, or {@code null} when it has none (the scalar one serves it). */
    static BlockDequantizer forType(GgmlType type) {
        return switch (type) {
            case F16 -> VectorPlainKernels.F16_K;
            case BF16 -> VectorPlainKernels.BF16_K;
            case Q4_0 -> VectorLegacyKernels.Q4_0_K;
            case Q4_1 -> VectorLegacyKernels.Q4_1_K;
            case Q8_0 -> VectorLegacyKernels.Q8_0_K;
            case Q4_K -> VectorKQuantKernels.Q4_K_K;
            case Q5_K -> VectorKQuantKernels.Q5_K_K;
            case Q6_K -> VectorKQuantKernels.Q6_K_K;
            default -> null;
        };
    }
}
