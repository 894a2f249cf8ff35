package dev.modelfs.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.quant.ggml.GgmlDequantizers;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link NarrowingDequant} writes the bytes of "dequantize the whole range to f32, then narrow it":
 * for native and heap destinations, unaligned offsets, ranges spanning several slices and a partial last one.
 */
class NarrowingDequantTest {

    @ParameterizedTest
    @EnumSource(FloatFormat.class)
    void blocksMatchDequantizeThenNarrow(FloatFormat format) {
        for (GgmlType type : new GgmlType[] {GgmlType.Q8_0, GgmlType.Q4_K, GgmlType.BF16}) {
            BlockDequantizer deq = GgmlDequantizers.forType(type);
            long blocks = 3L * NarrowingDequant.SLICE_ELEMENTS / deq.blockElements() + 5;
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment src = arena.allocate(blocks * deq.blockBytes() + 7);
                Random rnd = new Random(type.ordinal());
                for (long i = 0; i < src.byteSize(); i++) {
                    src.set(ValueLayout.JAVA_BYTE, i, (byte) rnd.nextInt());
                }
                for (int first : new int[] {0, 3}) {
                    long n = blocks - first;
                    long elems = n * deq.blockElements();
                    MemorySegment f32 = arena.allocate(elems * 4);
                    deq.dequantize(src, 7 + first * (long) deq.blockBytes(), f32, 0, n);
                    byte[] want = new byte[Math.toIntExact(elems * format.bytes)];
                    format.fromF32(f32, 0, MemorySegment.ofArray(want), 0, elems);

                    MemorySegment nativeDst = arena.allocate(want.length + 1);
                    NarrowingDequant.blocks(deq, src, 7 + first * (long) deq.blockBytes(), n, format, nativeDst, 1);
                    assertArrayEquals(want, nativeDst.asSlice(1).toArray(ValueLayout.JAVA_BYTE), type + " native");

                    byte[] heap = new byte[want.length + 3];
                    NarrowingDequant.blocks(deq, src, 7 + first * (long) deq.blockBytes(), n, format, MemorySegment.ofArray(heap), 3);
                    assertArrayEquals(want, java.util.Arrays.copyOfRange(heap, 3, heap.length), type + " heap");

                    // the same through units(), narrowing with each implementation's casts
                    long base = 7 + first * (long) deq.blockBytes();
                    NarrowingDequant.Units units = (f, k, out, off) -> deq.dequantize(src, base + f * deq.blockBytes(), out, off, k);
                    for (Kernels.Impl impl : Kernels.Impl.values()) {
                        nativeDst.fill((byte) 0);
                        NarrowingDequant.units(units, n, deq.blockElements(), format, nativeDst, 1, impl);
                        assertArrayEquals(want, nativeDst.asSlice(1).toArray(ValueLayout.JAVA_BYTE), type + " native " + impl);
                        java.util.Arrays.fill(heap, (byte) 0);
                        NarrowingDequant.units(units, n, deq.blockElements(), format, MemorySegment.ofArray(heap), 3, impl);
                        assertArrayEquals(want, java.util.Arrays.copyOfRange(heap, 3, heap.length), type + " heap " + impl);
                    }
                }
                MemorySegment small = arena.allocate(blocks * deq.blockElements() * format.bytes - 1);
                assertThrows(IndexOutOfBoundsException.class, () -> NarrowingDequant.blocks(deq, src, 0, blocks, format, small, 0));
            }
        }
    }
}
