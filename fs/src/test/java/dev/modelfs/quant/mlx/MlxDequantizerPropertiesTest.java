package dev.modelfs.quant.mlx;

import dev.modelfs.quant.Kernels;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;

import static dev.modelfs.format.LittleEndian.I16;
import static dev.modelfs.format.LittleEndian.I32;
import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.quant.mlx.MlxTestSupport.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Random data against reference formulas written independently of the kernels: affine codes of every width
 * packed by the test's bit-at-a-time packer, fp modes decoded element by element, and partial ranges
 * compared with slices of whole-tensor calls; each property runs both {@link Kernels.Impl}s.
 */
class MlxDequantizerPropertiesTest {

    @Provide
    Arbitrary<MlxQuant> affineQuants() {
        return Arbitraries.of(2, 3, 4, 5, 6, 8).flatMap(bits -> Arbitraries.of(32, 64, 128).map(g -> MlxQuant.affine(bits, g)));
    }

    @Provide
    Arbitrary<MlxQuant> fpQuants() {
        return Arbitraries.of(MlxQuant.of("nvfp4", null), MlxQuant.of("mxfp4", null), MlxQuant.of("mxfp8", null));
    }

    @Provide
    Arbitrary<MlxQuant> allQuants() {
        return Arbitraries.oneOf(affineQuants(), fpQuants());
    }

    @Provide
    Arbitrary<ScaleType> floatScaleTypes() {
        return Arbitraries.of(ScaleType.BF16, ScaleType.F16, ScaleType.F32);
    }

    /** Random tensor: codes, scale (and bias) bytes, each placed at its own pad in its own segment. */
    record Tensor(MlxTensorData data, int[] codes, byte[] scaleBytes, byte[] biasBytes) {}

    static Tensor randomTensor(Arena arena, MlxQuant q, ScaleType st, int groups, Random rnd, int pad, float global,
                               boolean boringScales) {
        int n = groups * q.groupSize();
        int[] codes = new int[n];
        for (int i = 0; i < n; i++) codes[i] = rnd.nextInt(1 << q.bits());
        byte[] packed = packBitStream(codes, q.bits());
        assertEquals((long) groups * q.codeBytesPerGroup(), packed.length);
        byte[] scales = new byte[groups * st.bytes()];
        byte[] biases = q.mode() == MlxMode.AFFINE ? new byte[groups * st.bytes()] : null;
        if (boringScales && st != ScaleType.U8) {
            MemorySegment s = MemorySegment.ofArray(scales), b = MemorySegment.ofArray(biases);
            for (int g = 0; g < groups; g++) {
                float sv = (float) (rnd.nextGaussian() * 0.02), bv = (float) (rnd.nextGaussian() * 0.1);
                switch (st) {
                    case BF16 -> { s.set(I16, 2L * g, (short) (Float.floatToRawIntBits(sv) >>> 16));
                                   b.set(I16, 2L * g, (short) (Float.floatToRawIntBits(bv) >>> 16)); }
                    case F16 -> { s.set(I16, 2L * g, Float.floatToFloat16(sv)); b.set(I16, 2L * g, Float.floatToFloat16(bv)); }
                    default -> { s.set(F32, 4L * g, sv); b.set(F32, 4L * g, bv); }
                }
            }
        } else {
            rnd.nextBytes(scales);
            if (biases != null) rnd.nextBytes(biases);
        }
        MemorySegment cs = at(arena, packed, pad);
        MemorySegment ss = at(arena, scales, pad + 1);
        MemorySegment bs = biases == null ? null : at(arena, biases, pad + 2);
        return new Tensor(new MlxTensorData(cs, pad, ss, pad + 1, st, bs, biases == null ? 0 : pad + 2, global),
                codes, scales, biases);
    }

    private static float decodeScalar(byte[] bytes, ScaleType st, int i) {
        return switch (st) {
            case BF16 -> Float.intBitsToFloat(((bytes[2 * i] & 0xFF) | (bytes[2 * i + 1] & 0xFF) << 8) << 16);
            case F16 -> Float.float16ToFloat((short) ((bytes[2 * i] & 0xFF) | (bytes[2 * i + 1] & 0xFF) << 8));
            case F32 -> Float.intBitsToFloat((bytes[4 * i] & 0xFF) | (bytes[4 * i + 1] & 0xFF) << 8
                    | (bytes[4 * i + 2] & 0xFF) << 16 | (bytes[4 * i + 3] & 0xFF) << 24);
            case U8 -> throw new AssertionError();
        };
    }

    /** Element {@code i} of {@code t} computed straight from the unpacked codes and the §5 formulas. */
    static float reference(MlxQuant q, Tensor t, int i, float global) {
        int g = i / q.groupSize();
        int code = t.codes()[i];
        if (q.mode() == MlxMode.AFFINE) {
            ScaleType st = t.data().scaleType();
            float product = decodeScalar(t.scaleBytes(), st, g) * code;
            return product + decodeScalar(t.biasBytes(), st, g);
        }
        int s = t.scaleBytes()[g] & 0xFF;
        float v = switch (q.mode()) {
            case NVFP4 -> MlxFloatCodes.e2m1(code) * MlxFloatCodes.e4m3(s);
            case MXFP4 -> MlxFloatCodes.e2m1(code) * MlxFloatCodes.e8m0(s);
            case MXFP8 -> MlxFloatCodes.e4m3(code) * MlxFloatCodes.e8m0(s);
            case AFFINE -> throw new AssertionError();
        };
        return global == 1f ? v : v * global;
    }

    private static void assertSameFloat(float want, float got, String where) {
        if (Float.isNaN(want) && Float.isNaN(got)) return;
        assertEquals(Float.floatToRawIntBits(want), Float.floatToRawIntBits(got),
                () -> where + ": expected " + want + " got " + got);
    }

    @Property(tries = 300)
    void affineIsScaleTimesCodePlusBias(@ForAll("affineQuants") MlxQuant q, @ForAll("floatScaleTypes") ScaleType st,
                                       @ForAll @IntRange(min = 1, max = 5) int groups, @ForAll @IntRange(max = 7) int pad,
                                       @ForAll boolean arbitraryScaleBits, @ForAll long seed, @ForAll Kernels.Impl impl) {
        try (Arena arena = Arena.ofConfined()) {
            Tensor t = randomTensor(arena, q, st, groups, new Random(seed), pad, 1f, !arbitraryScaleBits);
            int n = groups * q.groupSize();
            MemorySegment dst = arena.allocate(pad + 4L * n, 1);
            MlxDequantizer.of(q, impl).dequantize(t.data(), 0, groups, dst, pad);
            for (int i = 0; i < n; i++) {
                int g = i / q.groupSize();
                float scale = decodeScalar(t.scaleBytes(), st, g), bias = decodeScalar(t.biasBytes(), st, g);
                float product = scale * t.codes()[i];
                assertSameFloat(product + bias, dst.get(F32, pad + 4L * i), q.canonicalName() + " element " + i);
            }
        }
    }

    @Property(tries = 200)
    void fpModesDecodeElementByElement(@ForAll("fpQuants") MlxQuant q, @ForAll @IntRange(min = 1, max = 6) int groups,
                                       @ForAll @IntRange(max = 7) int pad, @ForAll boolean withGlobal, @ForAll long seed,
                                       @ForAll Kernels.Impl impl) {
        Random rnd = new Random(seed);
        float global = withGlobal ? (float) Math.scalb(0.5 + rnd.nextDouble(), rnd.nextInt(-12, 4)) : 1f;
        try (Arena arena = Arena.ofConfined()) {
            Tensor t = randomTensor(arena, q, ScaleType.U8, groups, rnd, pad, global, false);
            int n = groups * q.groupSize();
            MemorySegment dst = arena.allocate(pad + 4L * n, 1);
            MlxDequantizer.of(q, impl).dequantize(t.data(), 0, groups, dst, pad);
            for (int i = 0; i < n; i++) {
                int s = t.scaleBytes()[i / q.groupSize()] & 0xFF;
                int code = t.codes()[i];
                float v = switch (q.mode()) {
                    case NVFP4 -> MlxFloatCodes.e2m1(code) * MlxFloatCodes.e4m3(s);
                    case MXFP4 -> MlxFloatCodes.e2m1(code) * MlxFloatCodes.e8m0(s);
                    case MXFP8 -> MlxFloatCodes.e4m3(code) * MlxFloatCodes.e8m0(s);
                    case AFFINE -> throw new AssertionError();
                };
                if (withGlobal) v = v * global;
                assertSameFloat(v, dst.get(F32, pad + 4L * i), q.canonicalName() + " element " + i);
            }
        }
    }

    @Property(tries = 300)
    void partialRangesEqualSlicesOfTheWhole(@ForAll("allQuants") MlxQuant q, @ForAll @IntRange(min = 1, max = 9) int groups,
                                            @ForAll @IntRange(max = 9) int a, @ForAll @IntRange(max = 9) int b,
                                            @ForAll @IntRange(max = 7) int pad, @ForAll @IntRange(max = 7) int dstPad,
                                            @ForAll long seed, @ForAll Kernels.Impl impl) {
        int lo = Math.min(a, b) % (groups + 1), hi = Math.max(a, b) % (groups + 1);
        if (lo > hi) { int x = lo; lo = hi; hi = x; }
        Random rnd = new Random(seed);
        ScaleType st = q.mode() == MlxMode.AFFINE ? ScaleType.values()[rnd.nextInt(3)] : ScaleType.U8;
        float global = q.mode() == MlxMode.NVFP4 && rnd.nextBoolean() ? 0.37f : 1f;
        try (Arena arena = Arena.ofConfined()) {
            Tensor t = randomTensor(arena, q, st, groups, rnd, pad, global, rnd.nextBoolean());
            int gs = q.groupSize();
            MlxDequantizer dq = MlxDequantizer.of(q, impl);
            MemorySegment whole = arena.allocate(4L * groups * gs, 1);
            dq.dequantize(t.data(), 0, groups, whole, 0);
            long partBytes = 4L * (hi - lo) * gs;
            MemorySegment part = arena.allocate(dstPad + partBytes + 16, 1);
            part.fill((byte) 0xA5);
            dq.dequantize(t.data(), lo, hi - lo, part, dstPad);
            for (long i = 0; i < partBytes; i += 4) {
                int w = whole.get(I32, 4L * lo * gs + i), p = part.get(I32, dstPad + i);
                // NaN scales (arbitrary bit patterns) give NaN; its payload depends on the code path taken
                if (!(Float.isNaN(Float.intBitsToFloat(w)) && Float.isNaN(Float.intBitsToFloat(p)))) {
                    assertEquals(w, p, "byte offset " + i);
                }
            }
            for (long i = 0; i < part.byteSize(); i++) {
                if (i < dstPad || i >= dstPad + partBytes) {
                    assertEquals((byte) 0xA5, part.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i), "wrote outside range at " + i);
                }
            }
        }
    }
}
