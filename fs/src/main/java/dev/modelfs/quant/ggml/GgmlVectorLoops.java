package dev.modelfs.quant.ggml;

import static dev.modelfs.format.LittleEndian.I16;
import static dev.modelfs.format.LittleEndian.I32;
import static dev.modelfs.format.LittleEndian.I64;

import dev.modelfs.format.LittleEndian;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The hot loops of the Vector API GGML kernels ({@link VectorGgmlKernel}); arguments are checked by the caller.
 *
 * <p>Exactness: each loop does the f32 operations of its scalar twin ({@link LegacyKernels}, {@link KQuantKernels},
 * {@link PlainKernels}) in the same order: codes widen exactly (byte → int → f32), per-block scales are computed as
 * scalars exactly as there ({@code d * sc} rounded to f32 before it meets a code), then one multiply and, where the
 * format has an offset, a separate add or subtract; never an FMA. So the bytes are identical (see
 * {@code GgmlVectorKernelsPropertiesTest}).
 *
 * <p>Shape: {@link VectorShapes#L} codes per step, loaded as bytes; each block is read and written through
 * {@code asSlice} views of constant size, so the offsets inside are constants and C2 folds the bounds checks (about
 * 1.5x faster than offsets into the whole segment). Loop bodies are kept small enough for C2 to inline every vector
 * operation ({@code NodeCountInliningCutoff}: Q6_K's four quarters as one body did not fit and ran 6x slower).
 *
 * <p>Open question (measured, not understood): with a file-mapped source the K-quant loops (nested loops per block)
 * run 1.5-4x slower than with native memory, and erratically (phases of about 2.5 GB/s with no deoptimization and no
 * GC); Q4_0, Q8_0, Q4_1, F16 and BF16 are not affected at 128 KiB. Reading the block headers at absolute offsets,
 * a flat loop over sub-block pairs, and viewing the mapping as a plain native segment ({@code reinterpret}) did not
 * help. They are still 2-5x faster than the scalar loops there.
 *
 * <p>Kept free of lambdas, string concatenation, enum switches and nested classes: {@link
 * dev.modelfs.quant.SegmentKernelCopies} defines copies of this class, one per pair of segment classes.
 */
final class GgmlVectorLoops {
    private GgmlVectorLoops() {}

    /** Kernel ids for {@link #run}. */
    static final int F16 = 0, BF16 = 1, Q4_0 = 2, Q4_1 = 3, Q8_0 = 4, Q4_K = 5, Q5_K = 6, Q6_K = 7;

    private static final VectorSpecies<Float> F = VectorShapes.F;
    private static final VectorSpecies<Integer> I = VectorShapes.I;
    private static final VectorSpecies<Byte> B = VectorShapes.B;
    private static final VectorSpecies<Short> S = VectorShapes.S;
    private static final int L = VectorShapes.L;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;

    /** Dequantizes {@code n > 0} blocks with kernel {@code kernel}; bounds are already checked. */
    static void run(int kernel, MemorySegment src, long s, MemorySegment dst, long o, long n) {
        switch (kernel) {
            case F16 -> f16(src, s, dst, o, n);
            case BF16 -> bf16(src, s, dst, o, n);
            case Q4_0 -> q4_0(src, s, dst, o, n);
            case Q4_1 -> q4_1(src, s, dst, o, n);
            case Q8_0 -> q8_0(src, s, dst, o, n);
            case Q4_K -> q4_k(src, s, dst, o, n);
            case Q5_K -> q5_k(src, s, dst, o, n);
            case Q6_K -> q6_k(src, s, dst, o, n);
            default -> throw new IllegalArgumentException("unknown kernel id");
        }
    }

    /** {@code L} bytes at {@code off}, sign-extended to int lanes. */
    private static IntVector bytes(MemorySegment in, long off) {
        return (IntVector) ByteVector.fromMemorySegment(B, in, off, LE).convertShape(VectorOperators.B2I, I, 0);
    }

    private static FloatVector floats(IntVector v) {
        return (FloatVector) v.convertShape(VectorOperators.I2F, F, 0);
    }

    private static IntVector shr(IntVector v, int bits) {
        return v.lanewise(VectorOperators.LSHR, bits);
    }

    private static IntVector shl(IntVector v, int bits) {
        return v.lanewise(VectorOperators.LSHL, bits);
    }

    private static float half(MemorySegment in, long off) {
        return Float.float16ToFloat(in.get(I16, off));
    }

    /** Q8_0 (34 B → 32): {@code y = qs * d}. */
    private static void q8_0(MemorySegment src, long s, MemorySegment dst, long o, long n) {
        for (long b = 0; b < n; b++) {
            final MemorySegment in = src.asSlice(s + 34 * b, 34);
            final MemorySegment out = dst.asSlice(o + 128 * b, 128);
            final FloatVector d = FloatVector.broadcast(F, half(in, 0));
            for (int j = 0; j < 32; j += L) {
                floats(bytes(in, 2 + j)).mul(d).intoMemorySegment(out, 4 * j, LE);
            }
        }
    }

    /** Q4_0 (18 B → 32): {@code y[j] = (lo - 8) * d}, {@code y[j+16] = (hi - 8) * d}. */
    private static void q4_0(MemorySegment src, long s, MemorySegment dst, long o, long n) {
        for (long b = 0; b < n; b++) {
            final MemorySegment in = src.asSlice(s + 18 * b, 18);
            final MemorySegment out = dst.asSlice(o + 128 * b, 128);
            final FloatVector d = FloatVector.broadcast(F, half(in, 0));
            for (int j = 0; j < 16; j += L) {
                final IntVector q = bytes(in, 2 + j);
                floats(q.and(0xF).sub(8)).mul(d).intoMemorySegment(out, 4 * j, LE);
                floats(shr(q, 4).and(0xF).sub(8)).mul(d).intoMemorySegment(out, 64 + 4 * j, LE);
            }
        }
    }

    /** Q4_1 (20 B → 32): {@code y = nibble * d + m}, two roundings. */
    private static void q4_1(MemorySegment src, long s, MemorySegment dst, long o, long n) {
        for (long b = 0; b < n; b++) {
            final MemorySegment in = src.asSlice(s + 20 * b, 20);
            final MemorySegment out = dst.asSlice(o + 128 * b, 128);
            final FloatVector d = FloatVector.broadcast(F, half(in, 0));
            final FloatVector m = FloatVector.broadcast(F, half(in, 2));
            for (int j = 0; j < 16; j += L) {
                final IntVector q = bytes(in, 4 + j);
                floats(q.and(0xF)).mul(d).add(m).intoMemorySegment(out, 4 * j, LE);
                floats(shr(q, 4).and(0xF)).mul(d).add(m).intoMemorySegment(out, 64 + 4 * j, LE);
            }
        }
    }

    /** Q4_K (144 B → 256): sub-blocks 2c / 2c+1 are the low / high nibbles of {@code qs[32c ..]}. */
    private static void q4_k(MemorySegment src, long s, MemorySegment dst, long o, long n) {
        for (long b = 0; b < n; b++) {
            final MemorySegment in = src.asSlice(s + 144 * b, 144);
            final MemorySegment out = dst.asSlice(o + 1024 * b, 1024);
            final float d = half(in, 0);
            final float min = half(in, 2);
            final long scLo = in.get(I64, 4);
            final int scHi = in.get(I32, 12);
            for (int c = 0; c < 4; c++) {
                final int sm1 = KQuantKernels.scaleMinK4(2 * c, scLo, scHi);
                final int sm2 = KQuantKernels.scaleMinK4(2 * c + 1, scLo, scHi);
                final FloatVector d1 = FloatVector.broadcast(F, d * (sm1 & 0xFF));
                final FloatVector m1 = FloatVector.broadcast(F, min * (sm1 >>> 8));
                final FloatVector d2 = FloatVector.broadcast(F, d * (sm2 & 0xFF));
                final FloatVector m2 = FloatVector.broadcast(F, min * (sm2 >>> 8));
                for (int l = 0; l < 32; l += L) {
                    final IntVector v = bytes(in, 16 + 32 * c + l);
                    d1.mul(floats(v.and(0xF))).sub(m1).intoMemorySegment(out, 256 * c + 4 * l, LE);
                    d2.mul(floats(shr(v, 4).and(0xF))).sub(m2).intoMemorySegment(out, 256 * c + 128 + 4 * l, LE);
                }
            }
        }
    }

    /** Q5_K (176 B → 256): as Q4_K, plus bit {@code s} of {@code qh[l]} as bit 4 of sub-block s's codes. */
    private static void q5_k(MemorySegment src, long s, MemorySegment dst, long o, long n) {
        for (long b = 0; b < n; b++) {
            final MemorySegment in = src.asSlice(s + 176 * b, 176);
            final MemorySegment out = dst.asSlice(o + 1024 * b, 1024);
            final float d = half(in, 0);
            final float min = half(in, 2);
            final long scLo = in.get(I64, 4);
            final int scHi = in.get(I32, 12);
            for (int c = 0; c < 4; c++) {
                final int sm1 = KQuantKernels.scaleMinK4(2 * c, scLo, scHi);
                final int sm2 = KQuantKernels.scaleMinK4(2 * c + 1, scLo, scHi);
                final FloatVector d1 = FloatVector.broadcast(F, d * (sm1 & 0xFF));
                final FloatVector m1 = FloatVector.broadcast(F, min * (sm1 >>> 8));
                final FloatVector d2 = FloatVector.broadcast(F, d * (sm2 & 0xFF));
                final FloatVector m2 = FloatVector.broadcast(F, min * (sm2 >>> 8));
                for (int l = 0; l < 32; l += L) {
                    final IntVector v = bytes(in, 48 + 32 * c + l);
                    final IntVector h = shr(bytes(in, 16 + l), 2 * c);
                    final IntVector lo = v.and(0xF).or(shl(h.and(1), 4));
                    final IntVector hi = shr(v, 4).and(0xF).or(shl(h.and(2), 3));
                    d1.mul(floats(lo)).sub(m1).intoMemorySegment(out, 256 * c + 4 * l, LE);
                    d2.mul(floats(hi)).sub(m2).intoMemorySegment(out, 256 * c + 128 + 4 * l, LE);
                }
            }
        }
    }

    /**
     * Q6_K (210 B → 256): in half h, quarter k of element l (0..31) is nibble k/2 of {@code ql[64h + 32(k%2) + l]}
     * with bits 2k, 2k+1 of {@code qh[32h + l]} on top, minus 32, times {@code d * scales[8h + l/16 + 2k]}.
     */
    private static void q6_k(MemorySegment src, long s, MemorySegment dst, long o, long n) {
        for (long b = 0; b < n; b++) {
            final MemorySegment in = src.asSlice(s + 210 * b, 210);
            final MemorySegment out = dst.asSlice(o + 1024 * b, 1024);
            final float d = half(in, 208);
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < 32; l += L) {
                    final long scales = 192 + 8 * h + (l >>> 4);
                    for (int k = 0; k < 4; k++) { // one quarter per pass: small enough a body for C2
                        final IntVector nib = shr(bytes(in, 64 * h + 32 * (k & 1) + l), 4 * (k >>> 1)).and(0xF);
                        final IntVector top = shr(bytes(in, 128 + 32 * h + l), 2 * k).and(3);
                        final IntVector q = nib.or(shl(top, 4)).sub(32);
                        FloatVector.broadcast(F, d * in.get(U8, scales + 2 * k)).mul(floats(q))
                                .intoMemorySegment(out, 512 * h + 128 * k + 4 * l, LE);
                    }
                }
            }
        }
    }

    /** BF16: {@code bits << 16}, {@code L} at a time, then a scalar tail. */
    private static void bf16(MemorySegment src, long s, MemorySegment dst, long o, long n) {
        final long whole = n - n % L;
        for (long i = 0; i < whole; i += L) {
            final IntVector h = (IntVector) ShortVector.fromMemorySegment(S, src, s + 2 * i, LE)
                    .convertShape(VectorOperators.S2I, I, 0);
            shl(h, 16).intoMemorySegment(dst, o + 4 * i, LE);
        }
        for (long i = whole; i < n; i++) {
            dst.set(I32, o + 4 * i, src.get(I16, s + 2 * i) << 16);
        }
    }

    /**
     * F16 → f32 from bits, with no f32 arithmetic on subnormals (CPUs trap those to microcode): normal numbers
     * rebias the exponent with an integer add, subnormals are {@code (float) mantissa * 2^-24} (exact; all f32
     * normals), and infinities and NaNs widen their payload with the quiet bit set, as {@link Float#float16ToFloat}
     * does on this platform (the exhaustive test compares all 65536 codes).
     */
    private static void f16(MemorySegment src, long s, MemorySegment dst, long o, long n) {
        final long whole = n - n % L;
        for (long i = 0; i < whole; i += L) {
            final IntVector h = (IntVector) ShortVector.fromMemorySegment(S, src, s + 2 * i, LE)
                    .convertShape(VectorOperators.S2I, I, 0);
            final IntVector em = h.and(0x7FFF);
            final IntVector shifted = shl(em, 13);
            final IntVector normal = shifted.add((127 - 15) << 23);
            final IntVector subnormal = floats(em).mul(0x1p-24f).reinterpretAsInts();
            final VectorMask<Integer> nan = em.compare(VectorOperators.GT, 0x7C00);
            final IntVector infNan = shifted.or(0x7F80_0000).blend(shifted.or(0x7FC0_0000), nan);
            normal.blend(subnormal, em.compare(VectorOperators.LT, 0x0400))
                    .blend(infNan, em.compare(VectorOperators.GE, 0x7C00))
                    .or(shl(h.and(0x8000), 16))
                    .intoMemorySegment(dst, o + 4 * i, LE);
        }
        for (long i = whole; i < n; i++) {
            dst.set(LittleEndian.F32, o + 4 * i, Float.float16ToFloat(src.get(I16, s + 2 * i)));
        }
    }
}
