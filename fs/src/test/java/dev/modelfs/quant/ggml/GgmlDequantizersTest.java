package dev.modelfs.quant.ggml;

import static dev.modelfs.format.LittleEndian.I32;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.LittleEndian;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.quant.BlockDequantizer;
import dev.modelfs.quant.Kernels;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/**
 * API behaviour of {@link GgmlDequantizers}: types, block sizes, multi-block calls, offsets, bounds; every case runs
 * for both implementations ({@link Kernels.Impl}).
 */
class GgmlDequantizersTest {
    /** Every type with an f32 dequantization: all but the integer types. */
    static Stream<GgmlType> dequantizable() {
        return Arrays.stream(GgmlType.values()).filter(t -> !t.isInteger());
    }

    /** Every dequantizable type under each implementation. */
    static Stream<Arguments> dequantizableByImpl() {
        return Arrays.stream(Kernels.Impl.values()).flatMap(i -> dequantizable().map(t -> Arguments.of(t, i)));
    }

    /** Block sizes come from the type (checked against the spec's table in GgufTypesTest); one kernel per type. */
    @ParameterizedTest
    @MethodSource("dequantizableByImpl")
    void blockSizesAndSingletons(GgmlType t, Kernels.Impl impl) {
        final BlockDequantizer k = GgmlDequantizers.forType(t, impl);
        assertEquals(t.blockElements(), k.blockElements(), "elements of " + t);
        assertEquals(t.blockBytes(), k.blockBytes(), "bytes of " + t);
        assertSame(k, GgmlDequantizers.forType(t, impl), "singleton for " + t);
        assertTrue(k.toString().contains(t.name()), k.toString());
    }

    /** Without an implementation the JVM's active one serves; the scalar kernels stay available beside it. */
    @ParameterizedTest
    @MethodSource("dequantizable")
    void activeImplementationByDefault(GgmlType t) {
        assertSame(GgmlDequantizers.forType(t, Kernels.active()), GgmlDequantizers.forType(t));
        final boolean hasVector = GgmlVectorKernels.forType(t) != null;
        assertEquals(hasVector, GgmlDequantizers.forType(t, Kernels.Impl.SCALAR) != GgmlDequantizers.forType(t,
                Kernels.Impl.VECTOR), t + ": a vector kernel exactly where GgmlVectorKernels has one");
        assertEquals(hasVector, GgmlDequantizers.forType(t, Kernels.Impl.VECTOR).toString().contains("Vector API"));
    }

    /** The types the Vector API kernels cover (the issue asks for these at least). */
    @Test
    void vectorKernelsCoverTheCommonTypes() {
        for (GgmlType t : new GgmlType[] {GgmlType.F16, GgmlType.BF16, GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q8_0,
                GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K}) {
            assertTrue(GgmlVectorKernels.forType(t) != null, "no vector kernel for " + t);
        }
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"I8", "I16", "I32", "I64"})
    void rejectsIntegerTypes(GgmlType t) {
        assertThrows(IllegalArgumentException.class, () -> GgmlDequantizers.forType(t));
        for (Kernels.Impl impl : Kernels.Impl.values()) {
            assertThrows(IllegalArgumentException.class, () -> GgmlDequantizers.forType(t, impl));
        }
    }

    /** Random source bytes (scale fields may decode to inf/NaN: fine, runs are compared bit for bit). */
    private static byte[] randomBlocks(BlockDequantizer k, int blocks, long seed) {
        final byte[] b = new byte[blocks * k.blockBytes()];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static int[] bits(MemorySegment dst, long off, int floats) {
        final int[] r = new int[floats];
        for (int i = 0; i < floats; i++) {
            r[i] = dst.get(I32, off + 4L * i);
        }
        return r;
    }

    /** N blocks in one call == N single-block calls, at unaligned non-zero offsets, heap and native. */
    @ParameterizedTest
    @MethodSource("dequantizableByImpl")
    void multiBlockEqualsSingleBlocksAtUnalignedOffsets(GgmlType type, Kernels.Impl impl) {
        final int id = type.id();
        final BlockDequantizer k = GgmlDequantizers.forType(type, impl);
        final int blocks = k.blockElements() == 1 ? 37 : 7;
        final byte[] data = randomBlocks(k, blocks, 42 + id);
        final int floats = blocks * k.blockElements();
        final long srcOff = 13, dstOff = 6;
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment src = arena.allocate(data.length + srcOff + 9);
            MemorySegment.copy(MemorySegment.ofArray(data), 0, src, srcOff, data.length);
            final MemorySegment all = arena.allocate(floats * 4L + dstOff + 11);
            k.dequantize(src, srcOff, all, dstOff, blocks);
            final int[] together = bits(all, dstOff, floats);

            // one block at a time, into a heap segment at another odd offset
            final MemorySegment one = MemorySegment.ofArray(new byte[floats * 4 + 3]);
            for (int b = 0; b < blocks; b++) {
                k.dequantize(src, srcOff + (long) b * k.blockBytes(), one, 3 + 4L * b * k.blockElements(), 1);
            }
            assertArrayEquals(together, bits(one, 3, floats), "type " + id);

            // heap source at offset 0 and native destination at offset 0 give the same
            final MemorySegment heapSrc = MemorySegment.ofArray(data);
            final MemorySegment plain = arena.allocate(floats * 4L);
            k.dequantize(heapSrc, 0, plain, 0, blocks);
            assertArrayEquals(together, bits(plain, 0, floats), "type " + id + " at offset 0");

            // nothing outside [dstOff, dstOff + floats*4) was written
            for (long i = 0; i < dstOff; i++) {
                assertEquals(0, all.get(ValueLayout.JAVA_BYTE, i));
            }
            for (long i = dstOff + floats * 4L; i < all.byteSize(); i++) {
                assertEquals(0, all.get(ValueLayout.JAVA_BYTE, i));
            }
        }
    }

    @ParameterizedTest
    @MethodSource("dequantizableByImpl")
    void outOfRangeThrowsBeforeWriting(GgmlType type, Kernels.Impl impl) {
        final int id = type.id();
        final BlockDequantizer k = GgmlDequantizers.forType(type, impl);
        final int blocks = 3;
        final MemorySegment src = MemorySegment.ofArray(randomBlocks(k, blocks, id));
        final long outBytes = blocks * k.blockElements() * 4L;
        final MemorySegment dst = MemorySegment.ofArray(new byte[(int) outBytes]);
        final MemorySegment big = MemorySegment.ofArray(new byte[(int) outBytes + 64]);

        // source one byte short, via offset and via block count
        assertThrows(IndexOutOfBoundsException.class, () -> k.dequantize(src, 1, big, 0, blocks));
        assertThrows(IndexOutOfBoundsException.class, () -> k.dequantize(src, 0, big, 0, blocks + 1));
        // destination one byte short
        assertThrows(IndexOutOfBoundsException.class, () -> k.dequantize(src, 0, dst, 1, blocks));
        // negative offsets
        assertThrows(IndexOutOfBoundsException.class, () -> k.dequantize(src, -1, big, 0, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> k.dequantize(src, 0, big, -4, 1));
        // absurd block counts (overflow) and negative counts
        assertThrows(IndexOutOfBoundsException.class, () -> k.dequantize(src, 0, big, 0, Long.MAX_VALUE / 2));
        assertThrows(IllegalArgumentException.class, () -> k.dequantize(src, 0, big, 0, -1));
        for (int i = 0; i < big.byteSize(); i++) {
            assertEquals(0, big.get(ValueLayout.JAVA_BYTE, i), "a failed call wrote to dst");
        }
        // exact fit works; zero blocks is a no-op even at the very end
        k.dequantize(src, 0, dst, 0, blocks);
        k.dequantize(src, src.byteSize(), dst, dst.byteSize(), 0);
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void readOnlyDestinationIsRejected(Kernels.Impl impl) {
        for (GgmlType t : new GgmlType[] {GgmlType.Q4_0, GgmlType.Q8_0, GgmlType.Q4_K, GgmlType.F16}) {
            final BlockDequantizer k = GgmlDequantizers.forType(t, impl);
            final MemorySegment src = MemorySegment.ofArray(new byte[k.blockBytes() * 16]);
            final MemorySegment dst = MemorySegment.ofArray(new byte[k.blockElements() * 64]).asReadOnly();
            assertThrows(RuntimeException.class, () -> k.dequantize(src, 0, dst, 0, 16), t + " " + impl);
        }
    }

    // ---- hand-computed special cases (values from docs/FORMATS.md §5.7/§6.4 and ggml-impl.h, not from this code)

    private static int[] one(Kernels.Impl impl, GgmlType type, byte... block) {
        final BlockDequantizer k = GgmlDequantizers.forType(type, impl);
        final MemorySegment dst = MemorySegment.ofArray(new byte[k.blockElements() * 4 * (block.length / k.blockBytes())]);
        k.dequantize(MemorySegment.ofArray(block), 0, dst, 0, block.length / k.blockBytes());
        return bits(dst, 0, (int) (dst.byteSize() / 4));
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void plainTypesKeepBits(Kernels.Impl impl) {
        final MemorySegment f32 = MemorySegment.ofArray(new byte[12]);
        f32.set(I32, 0, 0x7FA0_0001); // signalling NaN with payload
        f32.set(I32, 4, 0x8000_0000);
        f32.set(I32, 8, 0x0000_0001);
        assertArrayEquals(new int[] {0x7FA0_0001, 0x8000_0000, 0x0000_0001},
                one(impl, GgmlType.F32, f32.toArray(ValueLayout.JAVA_BYTE)));
        // BF16: bits << 16, NaN payload kept
        assertArrayEquals(new int[] {0x7F81_0000, 0x3F80_0000, 0xC020_0000},
                one(impl, GgmlType.BF16, (byte) 0x81, (byte) 0x7F, (byte) 0x80, (byte) 0x3F, (byte) 0x20, (byte) 0xC0));
        // F16: 1.0, -2.0, smallest subnormal 2^-24, +inf
        assertArrayEquals(new int[] {0x3F80_0000, 0xC000_0000, 0x3380_0000, 0x7F80_0000},
                one(impl, GgmlType.F16, (byte) 0x00, (byte) 0x3C, (byte) 0x00, (byte) 0xC0,
                        (byte) 0x01, (byte) 0x00, (byte) 0x00, (byte) 0x7C));
        // F64: 1/3 rounds to nearest f32 0x3EAAAAAB; 1e300 → inf
        final MemorySegment f64 = MemorySegment.ofArray(new byte[16]);
        f64.set(LittleEndian.F64, 0, 1.0 / 3.0);
        f64.set(LittleEndian.F64, 8, 1e300);
        assertArrayEquals(new int[] {0x3EAA_AAAB, 0x7F80_0000}, one(impl, GgmlType.F64, f64.toArray(ValueLayout.JAVA_BYTE)));
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void mxfp4Edges(Kernels.Impl impl) {
        // e = 127 → d = 2^-1; code 8 (E2M1 -0) gives +0 (ggml's doubled table has 0), code 15 → -12 * 0.5 = -6
        final byte[] b = new byte[17];
        b[0] = 127;
        b[1] = (byte) 0xF8; // y[0] = code 8, y[16] = code 15
        b[2] = 0x71;        // y[1] = code 1 → 0.5, y[17] = code 7 → 6
        int[] y = one(impl, GgmlType.MXFP4, b);
        assertEquals(0x0000_0000, y[0]);
        assertEquals(Float.floatToIntBits(-6f), y[16]);
        assertEquals(Float.floatToIntBits(0.5f), y[1]);
        assertEquals(Float.floatToIntBits(6f), y[17]);
        // e = 255: ggml_e8m0_to_fp32_half gives 2^127; ±1 stays finite, |code value| >= 2 overflows to ±inf
        b[0] = (byte) 255;
        b[1] = (byte) 0x91; // code 1 → 1*2^127, code 9 → -1*2^127
        b[2] = (byte) 0xA2; // code 2 → 2*2^127 = inf, code 10 → -inf
        y = one(impl, GgmlType.MXFP4, b);
        assertEquals(0x7F00_0000, y[0]);
        assertEquals(0xFF00_0000, y[16]);
        assertEquals(0x7F80_0000, y[1]);
        assertEquals(0xFF80_0000, y[17]);
        // e = 0: 2^-128 (subnormal), code 7 → 12 * 2^-128 = 3 * 2^-126
        b[0] = 0;
        b[1] = 0x07;
        assertEquals(Float.floatToIntBits(Math.scalb(3f, -126)), one(impl, GgmlType.MXFP4, b)[0]);
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void nvfp4ScaleBytes(Kernels.Impl impl) {
        // d bytes: 0x38 = 1.0 (halved 0.5), 0x7F → 0, 0xB8 = 0x38 with bit 7 (ignored) → 0.5, 0xFF → 480/2 = 240
        final byte[] b = new byte[36];
        b[0] = 0x38;
        b[1] = 0x7F;
        b[2] = (byte) 0xB8;
        b[3] = (byte) 0xFF;
        for (int i = 4; i < 36; i++) {
            b[i] = 0x77; // code 7 → kvalue 12 in both nibbles
        }
        final int[] y = one(impl, GgmlType.NVFP4, b);
        for (int j = 0; j < 16; j++) {
            assertEquals(Float.floatToIntBits(6f), y[j]);
            assertEquals(0, y[16 + j]);
            assertEquals(Float.floatToIntBits(6f), y[32 + j]);
            assertEquals(Float.floatToIntBits(2880f), y[48 + j]);
        }
        b[0] = 0x00;
        b[1] = (byte) 0x80; // exp 0, man 0 → 0 (0x80 is not special-cased but decodes to 0)
        b[2] = 0x01; // smallest subnormal 2^-9, halved 2^-10
        final int[] z = one(impl, GgmlType.NVFP4, b);
        assertEquals(0, z[0]);
        assertEquals(0, z[16]);
        assertEquals(Float.floatToIntBits(12f * 0x1p-10f), z[32]);
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void q1_0AndQ2_0ByHand(Kernels.Impl impl) {
        final byte[] q1 = new byte[18];
        q1[0] = 0x00;
        q1[1] = 0x40;          // d = 2.0
        q1[2] = 0b0000_0101;   // elements 0 and 2 set
        q1[17] = (byte) 0x80;  // element 127 set
        final int[] y = one(impl, GgmlType.Q1_0, q1);
        assertEquals(Float.floatToIntBits(2f), y[0]);
        assertEquals(Float.floatToIntBits(-2f), y[1]);
        assertEquals(Float.floatToIntBits(2f), y[2]);
        assertEquals(Float.floatToIntBits(-2f), y[126]);
        assertEquals(Float.floatToIntBits(2f), y[127]);

        final byte[] q2 = new byte[18];
        q2[0] = 0x00;
        q2[1] = 0x38;               // d = 0.5
        q2[2] = (byte) 0b11_10_01_00; // codes 0,1,2,3 → -0.5, 0, 0.5, 1.0
        final int[] z = one(impl, GgmlType.Q2_0, q2);
        assertArrayEquals(new int[] {Float.floatToIntBits(-0.5f), 0, Float.floatToIntBits(0.5f), Float.floatToIntBits(1f)},
                java.util.Arrays.copyOf(z, 4));
        assertEquals(Float.floatToIntBits(-0.5f), z[63]);
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void q8_1IgnoresSumField(Kernels.Impl impl) {
        final byte[] b = new byte[36];
        b[0] = 0x00;
        b[1] = 0x3C; // d = 1
        b[2] = 0x55;
        b[3] = 0x55; // s: garbage, must be ignored
        for (int i = 0; i < 32; i++) {
            b[4 + i] = (byte) (i - 16);
        }
        final int[] y = one(impl, GgmlType.Q8_1, b);
        for (int i = 0; i < 32; i++) {
            assertEquals(Float.floatToIntBits((float) (i - 16)), y[i], "element " + i);
        }
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void zeroBlocksAnywhere(Kernels.Impl impl) {
        dequantizable().forEach(t -> {
            final BlockDequantizer k = GgmlDequantizers.forType(t, impl);
            k.dequantize(MemorySegment.NULL, 0, MemorySegment.NULL, 0, 0);
            assertTrue(k.toString().contains("GGML"));
        });
    }
}
