package dev.modelfs.quant.ggml;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.quant.BlockDequantizer;
import dev.modelfs.quant.Kernels;

import java.lang.foreign.MemorySegment;

/**
 * Run by {@link VectorClassesLoadLazilyTest} in a JVM of its own: dequantizes one block of every type through
 * {@link GgmlDequantizers#forType(GgmlType)} and prints {@code kernels=<active implementation>} and {@code ok}.
 */
final class ScalarOnlyJvmMain {
    private ScalarOnlyJvmMain() {}

    public static void main(String[] args) {
        for (GgmlType t : GgmlType.values()) {
            if (t.isInteger()) {
                continue;
            }
            final BlockDequantizer k = GgmlDequantizers.forType(t);
            final MemorySegment src = MemorySegment.ofArray(new byte[k.blockBytes()]);
            k.dequantize(src, 0, MemorySegment.ofArray(new byte[4 * k.blockElements()]), 0, 1);
        }
        if (!Kernels.vectorAvailable()) {
            try {
                GgmlDequantizers.forType(GgmlType.Q8_0, Kernels.Impl.VECTOR);
                System.out.println("VECTOR kernel handed out without the module");
                return;
            } catch (IllegalStateException expected) {
                // the Vector API kernels cannot run here, and say so
            }
        }
        System.out.println("kernels=" + Kernels.active());
        System.out.println("ok");
    }
}
