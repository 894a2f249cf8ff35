package dev.modelfs.quant.ggml;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.quant.BlockDequantizer;

/**
 * The GGML types with a Vector API kernel, and those kernels (singletons). Only {@link GgmlDequantizers} calls this,
 * and only when a Vector API kernel is asked for: this class is the one door to the classes that link
 * {@code jdk.incubator.vector}, so a JVM without that module never loads them.
 */
final class GgmlVectorKernels {
    private GgmlVectorKernels() {}

    private static final BlockDequantizer F16_K = new VectorGgmlKernel(GgmlType.F16, GgmlVectorLoops.F16);
    private static final BlockDequantizer BF16_K = new VectorGgmlKernel(GgmlType.BF16, GgmlVectorLoops.BF16);
    private static final BlockDequantizer Q4_0_K = new VectorGgmlKernel(GgmlType.Q4_0, GgmlVectorLoops.Q4_0);
    private static final BlockDequantizer Q4_1_K = new VectorGgmlKernel(GgmlType.Q4_1, GgmlVectorLoops.Q4_1);
    private static final BlockDequantizer Q8_0_K = new VectorGgmlKernel(GgmlType.Q8_0, GgmlVectorLoops.Q8_0);
    private static final BlockDequantizer Q4_K_K = new VectorGgmlKernel(GgmlType.Q4_K, GgmlVectorLoops.Q4_K);
    private static final BlockDequantizer Q5_K_K = new VectorGgmlKernel(GgmlType.Q5_K, GgmlVectorLoops.Q5_K);
    private static final BlockDequantizer Q6_K_K = new VectorGgmlKernel(GgmlType.Q6_K, GgmlVectorLoops.Q6_K);

    /** The Vector API kernel for {@code type}, or {@code null} when it has none (its scalar kernel serves it). */
    static BlockDequantizer forType(GgmlType type) {
        return switch (type) {
            case F16 -> F16_K;
            case BF16 -> BF16_K;
            case Q4_0 -> Q4_0_K;
            case Q4_1 -> Q4_1_K;
            case Q8_0 -> Q8_0_K;
            case Q4_K -> Q4_K_K;
            case Q5_K -> Q5_K_K;
            case Q6_K -> Q6_K_K;
            default -> null;
        };
    }
}
