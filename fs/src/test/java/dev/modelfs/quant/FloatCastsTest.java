package dev.modelfs.quant;

import static dev.modelfs.format.LittleEndian.I16;
import static dev.modelfs.format.LittleEndian.I32;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.*;

class FloatCastsTest {


    private static float f(int bits) { return Float.intBitsToFloat(bits); }

    private static int bf16(float x) { return FloatCasts.f32ToBf16(x) & 0xFFFF; }

    private static int f16(float x) { return FloatCasts.f32ToF16(x) & 0xFFFF; }

    @Test
    void bf16RoundTripIsExhaustivelyIdentity() {
        for (int h = 0; h < 0x10000; h++) {
            float x = FloatCasts.bf16ToF32((short) h);
            assertEquals(h << 16, Float.floatToRawIntBits(x), "widening is a shift");
            int back = bf16(x);
            boolean nan = (h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0;
            if (nan) {
                assertEquals(h | 0x0040, back, "NaN " + Integer.toHexString(h) + " keeps sign and payload, gets quiet bit");
            } else {
                assertEquals(h, back, "bf16 " + Integer.toHexString(h));
            }
        }
    }

    @Test
    void f16RoundTripIsExhaustivelyIdentity() {
        for (int h = 0; h < 0x10000; h++) {
            float x = FloatCasts.f16ToF32((short) h);
            int back = f16(x);
            boolean nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0;
            if (nan) {
                assertTrue(Float.isNaN(x));
                assertEquals(h & 0x8000, back & 0x8000, "NaN sign");
                assertTrue((back & 0x7C00) == 0x7C00 && (back & 0x3FF) != 0, "NaN stays NaN");
                assertTrue(back == h || back == (h | 0x200), "NaN payload kept (maybe quieted): " + Integer.toHexString(h)
                        + " -> " + Integer.toHexString(back));
            } else {
                assertEquals(h, back, "f16 " + Integer.toHexString(h));
                assertEquals(Float.float16ToFloat((short) h), x);
            }
        }
    }

    @Test
    void bf16RoundsToNearestEven() {
        // exactly halfway between 1.0 (0x3F80) and next (0x3F81): tie to even -> 0x3F80
        assertEquals(0x3F80, bf16(f(0x3F80_8000)));
        // halfway between 0x3F81 and 0x3F82: tie to even -> 0x3F82
        assertEquals(0x3F82, bf16(f(0x3F81_8000)));
        // just above / below halfway
        assertEquals(0x3F81, bf16(f(0x3F80_8001)));
        assertEquals(0x3F80, bf16(f(0x3F80_7FFF)));
        // negative ties
        assertEquals(0xBF80, bf16(f(0xBF80_8000)));
        assertEquals(0xBF82, bf16(f(0xBF81_8000)));
        // subnormals: tie between 0x0000 and 0x0001 -> 0; between 0x0001 and 0x0002 -> 2
        assertEquals(0x0000, bf16(f(0x0000_8000)));
        assertEquals(0x0002, bf16(f(0x0001_8000)));
        // mantissa carry into exponent: 0x3FFF_8000 halfway between 0x3FFF and 0x4000 -> 0x4000 (even)
        assertEquals(0x4000, bf16(f(0x3FFF_8000)));
        // max finite f32 rounds up to infinity; halfway below max bf16 finite stays even
        assertEquals(0x7F80, bf16(Float.MAX_VALUE));
        assertEquals(0x7F7E, bf16(f(0x7F7E_8000)));
        assertEquals(0x7F80, bf16(f(0x7F7F_8000)));
        // specials
        assertEquals(0x7F80, bf16(Float.POSITIVE_INFINITY));
        assertEquals(0xFF80, bf16(Float.NEGATIVE_INFINITY));
        assertEquals(0x8000, bf16(-0f));
        assertEquals(0x0000, bf16(0f));
        assertEquals(0x7FC0, bf16(Float.NaN));
        assertEquals(0xFFC0, bf16(f(0xFFC0_0000)));
        // signalling NaNs whose payload lives only in the low half must not turn into infinity
        assertEquals(0x7FC0, bf16(f(0x7F80_0001)));
        assertEquals(0xFFC0, bf16(f(0xFF80_FFFF)));
        assertEquals(0x7FFF, bf16(f(0x7FFF_FFFF)));
    }

    @Test
    void f16RoundsToNearestEven() {
        // 1 + 2^-11 is halfway between 1.0 (0x3C00) and 1 + 2^-10 (0x3C01): even -> 0x3C00
        assertEquals(0x3C00, f16(1f + 0x1p-11f));
        // 1 + 3*2^-11 halfway between 0x3C01 and 0x3C02 -> 0x3C02
        assertEquals(0x3C02, f16(1f + 3 * 0x1p-11f));
        assertEquals(0x3C01, f16(Math.nextUp(1f + 0x1p-11f)));
        assertEquals(0xBC00, f16(-(1f + 0x1p-11f)));
        // 65520 is halfway between 65504 (max) and 65536 (overflow): even -> infinity
        assertEquals(0x7C00, f16(65520f));
        assertEquals(0x7BFF, f16(Math.nextDown(65520f)));
        // subnormal ties: 2^-25 halfway between 0 and 2^-24 -> 0; 3*2^-25 -> 2*2^-24
        assertEquals(0x0000, f16(0x1p-25f));
        assertEquals(0x0002, f16(3 * 0x1p-25f));
        assertEquals(0x0001, f16(Math.nextUp(0x1p-25f)));
        assertEquals(0x7C00, f16(Float.POSITIVE_INFINITY));
        assertEquals(0xFC00, f16(Float.NEGATIVE_INFINITY));
        assertEquals(0x8000, f16(-0f));
        assertTrue(Float.isNaN(FloatCasts.f16ToF32(FloatCasts.f32ToF16(Float.NaN))));
    }

    private static int[] interestingBits(int n, long seed) {
        Random rnd = new Random(seed);
        int[] special = {0, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0x7F80_0001, 0xFFFF_FFFF, 0x0000_0001,
            0x3F80_8000, 0x3F81_8000, 0x7F7F_FFFF, 0x477F_F000, 0x3880_0000, 0x3380_0000, 0x3F80_1000};
        int[] bits = new int[n];
        for (int i = 0; i < n; i++) {
            bits[i] = i < special.length ? special[i]
                    : switch (rnd.nextInt(3)) {
                        case 0 -> rnd.nextInt();
                        case 1 -> Float.floatToRawIntBits((float) rnd.nextGaussian());
                        default -> (rnd.nextInt() & 0xFFFF_0000) | (rnd.nextBoolean() ? 0x8000 : 0x7FFF); // near ties
                    };
        }
        return bits;
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void bulkEqualsScalar(Kernels.Impl impl) {
        int n = 10_007;
        int[] bits = interestingBits(n, 42);
        try (Arena arena = Arena.ofConfined()) {
            for (int srcPad : new int[] {0, 1, 3}) {
                for (int dstPad : new int[] {0, 1}) {
                    MemorySegment src = arena.allocate(srcPad + 4L * n, 1);
                    for (int i = 0; i < n; i++) src.set(I32, srcPad + 4L * i, bits[i]);
                    MemorySegment dst = arena.allocate(dstPad + 2L * n + 4, 1);
                    dst.fill((byte) 0x33);
                    FloatCasts.f32ToBf16(src, srcPad, dst, dstPad, n, impl);
                    for (int i = 0; i < n; i++) {
                        assertEquals(FloatCasts.f32ToBf16(f(bits[i])), dst.get(I16, dstPad + 2L * i), "bf16 #" + i);
                    }
                    assertEquals(0x33, dst.get(ValueLayout.JAVA_BYTE, dstPad + 2L * n));
                    FloatCasts.f32ToF16(src, srcPad, dst, dstPad, n, impl);
                    for (int i = 0; i < n; i++) {
                        assertEquals(FloatCasts.f32ToF16(f(bits[i])), dst.get(I16, dstPad + 2L * i), "f16 #" + i);
                    }
                    assertEquals(0x33, dst.get(ValueLayout.JAVA_BYTE, dstPad + 2L * n));
                }
            }
            // heap segments too
            MemorySegment src = MemorySegment.ofArray(new int[4]);
            src.set(I32, 0, 0x3F80_8000);
            MemorySegment dst = MemorySegment.ofArray(new byte[8]);
            FloatCasts.f32ToBf16(src, 0, dst, 0, 4, impl);
            assertEquals((short) 0x3F80, dst.get(I16, 0));
        }
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void bulkChecksRangesFirst(Kernels.Impl impl) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(16), dst = arena.allocate(8);
            dst.fill((byte) 1);
            assertThrows(IndexOutOfBoundsException.class, () -> FloatCasts.f32ToBf16(src, 4, dst, 0, 4, impl));
            assertThrows(IndexOutOfBoundsException.class, () -> FloatCasts.f32ToF16(src, 0, dst, 2, 4, impl));
            assertThrows(IllegalArgumentException.class, () -> FloatCasts.f32ToF16(src, 0, dst, 0, -1, impl));
            assertThrows(IllegalArgumentException.class, () -> FloatCasts.f32ToBf16(src, 0, dst, 0, -1, impl));
            for (int i = 0; i < 8; i++) assertEquals(1, dst.get(ValueLayout.JAVA_BYTE, i));
            FloatCasts.f32ToBf16(src, 16, dst, 8, 0, impl);
        }
    }
}
