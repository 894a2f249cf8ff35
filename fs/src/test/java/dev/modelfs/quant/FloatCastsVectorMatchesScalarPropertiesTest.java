package dev.modelfs.quant;

import static dev.modelfs.format.LittleEndian.I32;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * The bulk casts of {@link Kernels.Impl#VECTOR} write the same bytes as {@link Kernels.Impl#SCALAR}: random f32 bits
 * biased towards the hard cases (ties, NaNs with payloads only in the low half, subnormals, overflow), any count
 * (vector tails), unaligned offsets, heap, native or file-mapped source and destination.
 */
class FloatCastsVectorMatchesScalarPropertiesTest {

    private static int bits(Random rnd) {
        return switch (rnd.nextInt(6)) {
            case 0 -> rnd.nextInt();
            case 1 -> (rnd.nextInt() & 0xFFFF_0000) | (rnd.nextBoolean() ? 0x8000 : rnd.nextInt(3) + 0x7FFF); // bf16 ties
            case 2 -> (rnd.nextInt() & 0x807F_FFFF) | 0x7F80_0000;                                            // inf / NaN
            case 3 -> rnd.nextInt() & 0x807F_FFFF;                                                            // f32 subnormals
            case 4 -> (rnd.nextInt() & 0x8000_0000) | (rnd.nextInt(0x3380_0000, 0x4780_0000) & ~0xFFF)
                    | (rnd.nextBoolean() ? 0x1000 : rnd.nextInt(0x2000));                                     // f16 range, ties
            default -> Float.floatToRawIntBits((float) rnd.nextGaussian());
        };
    }

    @Property(tries = 300)
    void vectorEqualsScalar(@ForAll @IntRange(max = 300) int count, @ForAll @IntRange(max = 7) int srcPad,
                            @ForAll @IntRange(max = 7) int dstPad, @ForAll SegmentKinds srcKind,
                            @ForAll SegmentKinds dstKind, @ForAll boolean f16, @ForAll long seed) {
        Random rnd = new Random(seed);
        byte[] src = new byte[srcPad + 4 * count + 1];
        rnd.nextBytes(src);
        MemorySegment s = MemorySegment.ofArray(src);
        for (int i = 0; i < count; i++) s.set(I32, srcPad + 4L * i, bits(rnd));
        byte[] fill = new byte[dstPad + 2 * count + 3];
        rnd.nextBytes(fill);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment in = srcKind.holding(arena, src);
            byte[][] out = new byte[2][];
            for (Kernels.Impl impl : Kernels.Impl.values()) {
                MemorySegment dst = dstKind.holding(arena, fill);
                if (f16) {
                    FloatCasts.f32ToF16(in, srcPad, dst, dstPad, count, impl);
                } else {
                    FloatCasts.f32ToBf16(in, srcPad, dst, dstPad, count, impl);
                }
                out[impl.ordinal()] = dst.toArray(ValueLayout.JAVA_BYTE);
            }
            assertArrayEquals(out[0], out[1], (f16 ? "f16" : "bf16") + " count " + count);
        }
    }
}
