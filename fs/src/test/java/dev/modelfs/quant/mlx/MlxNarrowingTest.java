package dev.modelfs.quant.mlx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.modelfs.quant.FloatFormat;
import dev.modelfs.quant.Kernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** MLX groups dequantized straight into a float format equal dequantizing to f32 and narrowing afterwards. */
class MlxNarrowingTest {

    @ParameterizedTest
    @EnumSource(FloatFormat.class)
    void formatOverloadMatchesF32ThenNarrow(FloatFormat format) {
        for (Kernels.Impl impl : Kernels.Impl.values()) formatOverloadMatchesF32ThenNarrow(format, impl);
    }

    private static void formatOverloadMatchesF32ThenNarrow(FloatFormat format, Kernels.Impl impl) {
        for (MlxQuant q : new MlxQuant[] {MlxQuant.affine(4, 64), MlxQuant.of("nvfp4", null)}) {
            ScaleType st = q.mode() == MlxMode.AFFINE ? ScaleType.BF16 : ScaleType.U8;
            int groups = 1200;
            try (Arena arena = Arena.ofConfined()) {
                MlxTensorData t = MlxDequantizerPropertiesTest.randomTensor(arena, q, st, groups, new Random(groups), 1, 1f, true).data();
                MlxDequantizer dq = MlxDequantizer.of(q, impl);
                int first = 17;
                long n = groups - first;
                long elems = n * q.groupSize();
                MemorySegment f32 = arena.allocate(elems * 4);
                dq.dequantize(t, first, n, f32, 0);
                byte[] want = new byte[Math.toIntExact(elems * format.bytes)];
                format.fromF32(f32, 0, MemorySegment.ofArray(want), 0, elems);

                MemorySegment nativeDst = arena.allocate(want.length + 2);
                dq.dequantize(t, first, n, format, nativeDst, 2);
                assertArrayEquals(want, nativeDst.asSlice(2).toArray(ValueLayout.JAVA_BYTE), q + " " + impl + " native");
                byte[] heap = new byte[want.length];
                dq.dequantize(t, first, n, format, MemorySegment.ofArray(heap), 0);
                assertArrayEquals(want, Arrays.copyOf(heap, heap.length), q + " " + impl + " heap");
            }
        }
    }
}
