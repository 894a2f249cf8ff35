package dev.modelfs.quant.mlx;

import dev.modelfs.quant.FloatCasts;
import dev.modelfs.quant.Kernels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MlxAllocationAndCopiesTest {

    @Test
    void eachSegmentClassCombinationGetsItsOwnKernelCopy() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n1 = arena.allocate(64), n2 = arena.allocate(64);
            MemorySegment h1 = MemorySegment.ofArray(new byte[64]);
            var a = MlxDequantizer.KERNELS.forSegments(n1, n1, null, n2);
            assertSame(a, MlxDequantizer.KERNELS.forSegments(n2, n2, null, n1), "same classes, same copy");
            var b = MlxDequantizer.KERNELS.forSegments(n1, n1, null, h1);
            assertNotSame(a, b, "heap dst gets another copy");
            assertNotSame(MlxDequantizer.KERNELS.shared(), a, "copies are hidden classes, not the shared one");
            assertTrue(MlxDequantizer.KERNELS.copies() >= 2);
        }
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void steadyStateCallsDoNotAllocate(Kernels.Impl impl) {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment codes = arena.allocate(1 << 16), scales = arena.allocate(1 << 12), dst = arena.allocate(1 << 18);
            for (long i = 0; i < scales.byteSize(); i++) scales.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) 0x30);
            MlxDequantizer[] dqs = {MlxDequantizer.of(MlxQuant.affine(4, 64), impl), MlxDequantizer.of(MlxQuant.affine(8, 64), impl),
                MlxDequantizer.of(MlxQuant.affine(3, 64), impl), MlxDequantizer.of(MlxQuant.of("nvfp4", null), impl),
                MlxDequantizer.of(MlxQuant.of("mxfp4", null), impl), MlxDequantizer.of(MlxQuant.of("mxfp8", null), impl)};
            MlxTensorData[] data = new MlxTensorData[dqs.length];
            for (int k = 0; k < dqs.length; k++) {
                boolean affine = dqs[k].quant().mode() == MlxMode.AFFINE;
                data[k] = new MlxTensorData(codes, 0, scales, 0, affine ? ScaleType.BF16 : ScaleType.U8,
                        affine ? scales : null, 0, k == 3 ? 0.5f : 1f);
            }
            Runnable all = () -> {
                for (int k = 0; k < dqs.length; k++) dqs[k].dequantize(data[k], 1, 512, dst, 3);
                dqs[0].dequantize(data[0], 1, 512, dev.modelfs.quant.FloatFormat.BF16, dst, 3);   // fused int4 to bf16
                FloatCasts.f32ToBf16(dst, 0, codes, 1, 1000, impl);
                FloatCasts.f32ToF16(dst, 0, codes, 1, 1000, impl);
            };
            // Steady state: once the JIT has compiled the kernels, a window of 200 rounds allocates nothing.
            // Under CPU contention compilation can finish late, so keep warming up (bounded) until a clean window.
            long allocated = -1;
            for (int window = 0; window < 40 && allocated != 0; window++) {
                for (int i = 0; i < 1000; i++) all.run();
                long before = mx.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < 200; i++) all.run();
                allocated = mx.getCurrentThreadAllocatedBytes() - before;
            }
            assertEquals(0, allocated, "bytes allocated by 200 rounds of calls after 40 warm-up windows");
        }
    }
}
