package dev.modelfs.quant.mlx;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I16;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.modelfs.quant.FloatFormat;
import dev.modelfs.quant.Kernels;
import dev.modelfs.quant.SegmentKinds;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link Kernels.Impl#VECTOR} writes the same bytes as {@link Kernels.Impl#SCALAR}, byte for byte, on random codes and
 * scale bits (NaN with payloads, infinities, subnormals, zeros of both signs, E8M0 0 and 255, E4M3 0x7F), any group
 * range (odd counts, ranges not starting at group 0), unaligned offsets and heap, native or file-mapped segments
 * for every operand. The only exemption: in affine groups with a NaN bias and a NaN or infinite scale,
 * {@code scale * q + bias} may add two NaNs, and which payload survives is not something the scalar path defines
 * (measured: two runs of the same scalar loop, interpreted and compiled, kept different payloads), so there only NaN-ness is compared.
 */
class MlxVectorMatchesScalarPropertiesTest {

    @Provide
    Arbitrary<MlxQuant> quants() {
        return Arbitraries.oneOf(
                Arbitraries.of(2, 3, 4, 5, 6, 8).flatMap(b -> Arbitraries.of(32, 64, 128).map(g -> MlxQuant.affine(b, g))),
                Arbitraries.of(4, 8).flatMap(b -> Arbitraries.of(32, 64, 128).map(g -> MlxQuant.affine(b, g))),
                Arbitraries.of(MlxQuant.of("nvfp4", null), MlxQuant.of("mxfp4", null), MlxQuant.of("mxfp8", null)));
    }

    private static final int[] SPECIAL_F32 = {
        0x7FC0_0000, 0xFFC0_0001, 0x7F80_0001, 0x7FBF_FFFF, 0xFF81_2345, // NaNs, quiet and signalling, with payloads
        0x7F80_0000, 0xFF80_0000, 0x0000_0000, 0x8000_0000,           // infinities, zeros
        0x0000_0001, 0x807F_FFFF, 0x0040_0000, 0x7F7F_FFFF, 0xFF7F_FFFF, // subnormals, largest finite
    };

    /** Bits of one scale or bias value: mostly plausible, often special, sometimes anything. */
    private static int f32Bits(Random rnd) {
        return switch (rnd.nextInt(4)) {
            case 0 -> SPECIAL_F32[rnd.nextInt(SPECIAL_F32.length)];
            case 1 -> rnd.nextInt();
            default -> Float.floatToRawIntBits((float) (rnd.nextGaussian() * 0.05));
        };
    }

    private static byte[] floatArray(ScaleType st, int n, Random rnd) {
        byte[] out = new byte[n * st.bytes()];
        MemorySegment s = MemorySegment.ofArray(out);
        for (int i = 0; i < n; i++) {
            int bits = f32Bits(rnd);
            switch (st) {
                case BF16 -> s.set(I16, 2L * i, rnd.nextInt(8) == 0 ? (short) rnd.nextInt() : (short) (bits >>> 16));
                case F16 -> s.set(I16, 2L * i, rnd.nextInt(8) == 0 ? (short) rnd.nextInt()
                        : Float.floatToFloat16(Float.intBitsToFloat(bits)));
                case F32 -> s.set(F32, 4L * i, Float.intBitsToFloat(bits));
                case U8 -> throw new AssertionError();
            }
        }
        return out;
    }

    private static byte[] padded(byte[] bytes, int pad, Random rnd) {
        byte[] out = new byte[pad + bytes.length + 3];
        rnd.nextBytes(out);
        System.arraycopy(bytes, 0, out, pad, bytes.length);
        return out;
    }

    @Property(tries = 400)
    void vectorEqualsScalar(@ForAll("quants") MlxQuant q, @ForAll @IntRange(min = 1, max = 41) int groups,
                            @ForAll @IntRange(max = 40) int firstGroup, @ForAll @IntRange(max = 7) int pad,
                            @ForAll @IntRange(max = 7) int dstPad, @ForAll SegmentKinds codesKind,
                            @ForAll SegmentKinds scalesKind, @ForAll SegmentKinds dstKind, @ForAll long seed) {
        Random rnd = new Random(seed);
        boolean affine = q.mode() == MlxMode.AFFINE;
        ScaleType st = affine ? ScaleType.values()[rnd.nextInt(3)] : ScaleType.U8;
        int total = firstGroup + groups;
        byte[] codes = new byte[total * q.codeBytesPerGroup()];
        rnd.nextBytes(codes);
        byte[] scales;
        if (affine) {
            scales = floatArray(st, total, rnd);
        } else {
            scales = new byte[total];
            rnd.nextBytes(scales);
        }
        byte[] biases = affine ? floatArray(st, total, rnd) : null;
        float global = affine || rnd.nextBoolean() ? 1f
                : rnd.nextInt(4) == 0 ? Float.intBitsToFloat(f32Bits(rnd)) : (float) Math.scalb(0.5 + rnd.nextDouble(), rnd.nextInt(-20, 20));
        long outBytes = 4L * groups * q.groupSize();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = codesKind.holding(arena, padded(codes, pad, rnd));
            MemorySegment ss = scalesKind.holding(arena, padded(scales, pad + 1, rnd));
            MemorySegment bs = affine ? scalesKind.holding(arena, padded(biases, pad + 2, rnd)) : null;
            MlxTensorData t = new MlxTensorData(cs, pad, ss, pad + 1, st, bs, affine ? pad + 2 : 0, global);
            byte[] fill = new byte[(int) (dstPad + outBytes + 5)];
            byte[][] out = new byte[2][];
            for (Kernels.Impl impl : Kernels.Impl.values()) {
                MemorySegment dst = dstKind.holding(arena, fill);
                MlxDequantizer.of(q, impl).dequantize(t, firstGroup, groups, dst, dstPad);
                out[impl.ordinal()] = dst.toArray(ValueLayout.JAVA_BYTE);
            }
            byte[] scalar = out[Kernels.Impl.SCALAR.ordinal()], vector = out[Kernels.Impl.VECTOR.ordinal()];
            for (int i = dstPad; affine && i < dstPad + outBytes; i += 4) {
                if (twoNaNs(scales, biases, st, firstGroup + (i - dstPad) / 4 / q.groupSize())) {
                    assertEquals(Float.isNaN(f32(scalar, i)), Float.isNaN(f32(vector, i)), "NaN at byte " + i);
                    System.arraycopy(scalar, i, vector, i, 4);
                }
            }
            for (int i = dstPad; i < dstPad + outBytes; i += 4) {
                if (f32Bits(scalar, i) != f32Bits(vector, i)) {
                    int e = (i - dstPad) / 4, g = firstGroup + e / q.groupSize();
                    float sc = affine ? decode(scales, st, g) : Float.NaN, bi = affine ? decode(biases, st, g) : Float.NaN;
                    throw new AssertionError(q.canonicalName() + " " + st + " global " + global + " element " + e + ": scalar "
                            + Integer.toHexString(f32Bits(scalar, i)) + " vector " + Integer.toHexString(f32Bits(vector, i))
                            + " scale " + sc + " bias " + bi + " (" + Integer.toHexString(Float.floatToRawIntBits(sc)) + ", "
                            + Integer.toHexString(Float.floatToRawIntBits(bi)) + ")");
                }
            }
            assertArrayEquals(scalar, vector, q.canonicalName() + " " + st + " global " + global);
        }
    }

    /** The narrowing overload too: bf16 and f16 output into heap and native destinations, one slice or several. */
    @Property(tries = 60)
    void narrowedOutputEqualsScalar(@ForAll("quants") MlxQuant q, @ForAll @IntRange(min = 1, max = 700) int groups,
                                    @ForAll FloatFormat format, @ForAll boolean heap, @ForAll long seed) {
        Random rnd = new Random(seed);
        boolean affine = q.mode() == MlxMode.AFFINE;
        ScaleType st = affine ? ScaleType.values()[rnd.nextInt(3)] : ScaleType.U8;
        byte[] codes = new byte[groups * q.codeBytesPerGroup()];
        rnd.nextBytes(codes);
        byte[] scales = affine ? floatArray(st, groups, rnd) : new byte[groups];
        if (!affine) rnd.nextBytes(scales);
        byte[] biases = affine ? floatArray(st, groups, rnd) : null;
        try (Arena arena = Arena.ofConfined()) {
            MlxTensorData t = new MlxTensorData(SegmentKinds.NATIVE.holding(arena, codes), 0,
                    SegmentKinds.NATIVE.holding(arena, scales), 0, st,
                    affine ? SegmentKinds.NATIVE.holding(arena, biases) : null, 0, 1f);
            long bytes = (long) groups * q.groupSize() * format.bytes;
            byte[][] out = new byte[2][];
            for (Kernels.Impl impl : Kernels.Impl.values()) {
                MemorySegment dst = (heap ? SegmentKinds.HEAP : SegmentKinds.NATIVE).holding(arena, new byte[(int) bytes + 1]);
                MlxDequantizer.of(q, impl).dequantize(t, 0, groups, format, dst, 1);
                out[impl.ordinal()] = dst.toArray(ValueLayout.JAVA_BYTE);
            }
            byte[] scalar = out[0], vector = out[1];
            int unit = format.bytes;
            for (int i = 1; i < scalar.length; i += unit) {
                int g = (i - 1) / unit / q.groupSize();
                if (affine && twoNaNs(scales, biases, st, g)) System.arraycopy(scalar, i, vector, i, unit);
            }
            assertArrayEquals(scalar, vector, q.canonicalName() + " " + st + " " + format);
        }
    }

    /**
     * The fused int4 to bf16 kernel ({@link MlxDequantizer#of}, native destination) writes the same bytes as the
     * two passes it replaces ({@link MlxDequantizer#twoPass}: f32 scratch, then the bf16 cast), under each
     * implementation: random codes, scale and bias bits of every scale type (NaN, infinite, subnormal and
     * overflowing products), any group range and offsets, codes and scales from heap, native or mapped segments.
     * Groups that may add two NaNs compare NaN-ness only (see the class comment).
     */
    @Property(tries = 300)
    void fusedInt4Bf16EqualsTwoPass(@ForAll("groupSizes") int gs, @ForAll @IntRange(min = 1, max = 700) int groups,
                                    @ForAll @IntRange(max = 40) int firstGroup, @ForAll @IntRange(max = 7) int pad,
                                    @ForAll @IntRange(max = 7) int dstPad, @ForAll SegmentKinds codesKind,
                                    @ForAll SegmentKinds scalesKind, @ForAll long seed) {
        Random rnd = new Random(seed);
        MlxQuant q = MlxQuant.affine(4, gs);
        ScaleType st = ScaleType.values()[rnd.nextInt(3)];
        int total = firstGroup + groups;
        byte[] codes = new byte[total * q.codeBytesPerGroup()];
        rnd.nextBytes(codes);
        byte[] scales = floatArray(st, total, rnd), biases = floatArray(st, total, rnd);
        long outBytes = 2L * groups * gs;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = codesKind.holding(arena, padded(codes, pad, rnd));
            MemorySegment ss = scalesKind.holding(arena, padded(scales, pad + 1, rnd));
            MemorySegment bs = scalesKind.holding(arena, padded(biases, pad + 2, rnd));
            MlxTensorData t = new MlxTensorData(cs, pad, ss, pad + 1, st, bs, pad + 2, 1f);
            byte[] fill = new byte[(int) (dstPad + outBytes + 5)];
            rnd.nextBytes(fill);
            for (Kernels.Impl impl : Kernels.Impl.values()) {
                MemorySegment fused = SegmentKinds.NATIVE.holding(arena, fill), twoPass = SegmentKinds.NATIVE.holding(arena, fill);
                MlxDequantizer.of(q, impl).dequantize(t, firstGroup, groups, FloatFormat.BF16, fused, dstPad);
                MlxDequantizer.twoPass(q, impl).dequantize(t, firstGroup, groups, FloatFormat.BF16, twoPass, dstPad);
                byte[] a = twoPass.toArray(ValueLayout.JAVA_BYTE), b = fused.toArray(ValueLayout.JAVA_BYTE);
                for (int i = dstPad; i < dstPad + outBytes; i += 2) {
                    if (twoNaNs(scales, biases, st, firstGroup + (i - dstPad) / 2 / gs)) {
                        assertEquals(Float.isNaN(bf16(a, i)), Float.isNaN(bf16(b, i)), "NaN at byte " + i);
                        System.arraycopy(a, i, b, i, 2);
                    }
                }
                assertArrayEquals(a, b, "int4 g" + gs + " " + st + " " + impl + ": fused differs from two-pass at byte "
                        + java.util.Arrays.mismatch(a, b));
            }
        }
    }

    @Provide
    Arbitrary<Integer> groupSizes() {
        return Arbitraries.of(32, 64, 128);
    }

    private static float bf16(byte[] b, int at) {
        return Float.intBitsToFloat(MemorySegment.ofArray(b).get(I16, at) << 16);
    }

    private static int f32Bits(byte[] b, int at) {
        return Float.floatToRawIntBits(f32(b, at));
    }

    private static float decode(byte[] values, ScaleType st, int i) {
        MemorySegment s = MemorySegment.ofArray(values);
        return switch (st) {
            case BF16 -> Float.intBitsToFloat(s.get(I16, 2L * i) << 16);
            case F16 -> Float.float16ToFloat(s.get(I16, 2L * i));
            case F32 -> s.get(F32, 4L * i);
            case U8 -> Float.NaN;
        };
    }

    private static float f32(byte[] b, int at) {
        return MemorySegment.ofArray(b).get(F32, at);
    }

    /** Whether {@code scale * q + bias} of group {@code g} may add two NaNs (a NaN or infinite scale, a NaN bias). */
    private static boolean twoNaNs(byte[] scales, byte[] biases, ScaleType st, int g) {
        float sc = decode(scales, st, g);
        return Float.isNaN(decode(biases, st, g)) && (Float.isNaN(sc) || Float.isInfinite(sc));
    }
}
