package dev.modelfs.quant.mlx;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Vector API versions of the {@link MlxKernels} loops for affine 4 and 8 bits, nvfp4, mxfp4 and mxfp8
 * ({@link dev.modelfs.quant.Kernels.Impl#VECTOR}); the other affine widths stay scalar. Loaded only when the vector
 * implementation is chosen; copied per combination of segment classes like the scalar class (hence no lambdas,
 * string concatenation or nested classes here).
 *
 * <p>Invariants: writes the same bytes as {@link MlxKernels} for the same arguments. Each value is computed with the
 * same operations in the same order ({@code f32(scale) * q} then {@code + f32(bias)}; {@code E2M1(q) * scale} then
 * {@code * global}), only on 8 or 16 lanes at once (512-bit vectors where the CPU prefers them, else 256-bit). The
 * fp kernels always multiply by the global scale: {@code x * 1f} is {@code x}, bit for bit, for every {@code x} an
 * arithmetic operation can produce. Arguments are validated by the caller.
 */
final class MlxVectorKernels {

    private static final int K_AFFINE4 = MlxKernels.K_AFFINE4, K_AFFINE8 = MlxKernels.K_AFFINE8,
            K_NVFP4 = MlxKernels.K_NVFP4, K_MXFP4 = MlxKernels.K_MXFP4, K_MXFP8 = MlxKernels.K_MXFP8;
    private static final int BF16 = MlxKernels.BF16, F16 = MlxKernels.F16, F32_TYPE = MlxKernels.F32_TYPE;

    private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED.vectorBitSize() >= 512
            ? FloatVector.SPECIES_512 : FloatVector.SPECIES_256;
    private static final int LANES = FLOATS.length();
    private static final VectorSpecies<Integer> INTS = LANES == 16 ? IntVector.SPECIES_512 : IntVector.SPECIES_256;
    /** 16 code bytes: 32 nibbles, 2 or 4 vectors of output. */
    private static final VectorSpecies<Byte> BYTES16 = ByteVector.SPECIES_128;
    /** One vector's worth of 8-bit codes. */
    private static final VectorSpecies<Byte> BYTES_LANES = LANES == 16 ? ByteVector.SPECIES_128 : ByteVector.SPECIES_64;

    /** Repeats byte {@code k*LANES/2 + i/2} in lane {@code i}: the bytes holding the nibbles of output vector k. */
    private static final VectorShuffle<Byte> DUP0 = dup(0), DUP1 = dup(1), DUP2 = dup(2), DUP3 = dup(3);
    /** Shifts that move the nibble of lane {@code i} to the bottom: low nibble in even lanes, high in odd. */
    private static final IntVector NIBBLE_SHIFTS = IntVector.fromArray(INTS, nibbleShifts(), 0);
    /** E2M1 value bits of codes 0..LANES-1 and LANES..2*LANES-1 (the two tables of a two-vector select). */
    private static final IntVector E2M1_LO = IntVector.fromArray(INTS, e2m1Bits(), 0);
    private static final IntVector E2M1_HI = IntVector.fromArray(INTS, e2m1Bits(), LANES);

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);

    private static final float[] E2M1 = MlxFloatCodes.E2M1;
    private static final float[] E4M3 = MlxFloatCodes.E4M3;
    private static final float[] E8M0 = MlxFloatCodes.E8M0;

    private MlxVectorKernels() {}

    private static VectorShuffle<Byte> dup(int k) {
        int[] idx = new int[16];
        for (int i = 0; i < 16; i++) idx[i] = (k * LANES / 2 + i / 2) & 15;
        return VectorShuffle.fromArray(BYTES16, idx, 0);
    }

    private static int[] nibbleShifts() {
        int[] s = new int[LANES];
        for (int i = 0; i < LANES; i++) s[i] = (i & 1) * 4;
        return s;
    }

    private static int[] e2m1Bits() {
        int[] b = new int[32];
        for (int i = 0; i < 32; i++) b[i] = Float.floatToRawIntBits(MlxFloatCodes.E2M1[i & 15]);
        return b;
    }

    /** Whether this class has a kernel for {@code kind} ({@link MlxKernels} kinds). */
    static boolean supports(int kind) {
        return kind == K_AFFINE4 || kind == K_AFFINE8 || kind == K_NVFP4 || kind == K_MXFP4 || kind == K_MXFP8;
    }

    /** As {@link MlxKernels#run}, for the kinds {@link #supports} accepts. */
    static void run(int kind, MemorySegment codes, long c, MemorySegment scales, long s, MemorySegment biases, long b,
                    int type, long groups, int gs, int bits, float global, MemorySegment dst, long d) {
        switch (kind) {
            case K_AFFINE4 -> affine4(codes, c, scales, s, biases, b, type, groups, gs, dst, d);
            case K_AFFINE8 -> affine8(codes, c, scales, s, biases, b, type, groups, gs, dst, d);
            case K_NVFP4 -> fp4(codes, c, scales, s, E4M3, groups, gs, global, dst, d);
            case K_MXFP4 -> fp4(codes, c, scales, s, E8M0, groups, gs, global, dst, d);
            case K_MXFP8 -> mxfp8(codes, c, scales, s, groups, gs, global, dst, d);
            default -> throw new IllegalArgumentException("kind");
        }
    }

    private static float scalar(MemorySegment seg, long off, int type) {
        if (type == BF16) return Float.intBitsToFloat(seg.get(I16, off) << 16);
        if (type == F16) return Float.float16ToFloat(seg.get(I16, off));
        return seg.get(F32, off);
    }

    /** The nibbles of output vector k of a 16-byte chunk, one per int lane, in stream order. */
    private static IntVector nibbles(ByteVector chunk, VectorShuffle<Byte> dup) {
        IntVector bytes = (IntVector) chunk.rearrange(dup).convertShape(VectorOperators.ZERO_EXTEND_B2I, INTS, 0);
        return bytes.lanewise(VectorOperators.LSHR, NIBBLE_SHIFTS).and(15);
    }

    private static FloatVector affineNibbles(ByteVector chunk, VectorShuffle<Byte> dup, float sc, float bi) {
        FloatVector q = (FloatVector) nibbles(chunk, dup).convert(VectorOperators.I2F, 0);
        return q.mul(sc).add(bi);
    }

    private static FloatVector fp4Nibbles(ByteVector chunk, VectorShuffle<Byte> dup, float sc, float global) {
        FloatVector v = nibbles(chunk, dup).selectFrom(E2M1_LO, E2M1_HI).reinterpretAsFloats();
        return v.mul(sc).mul(global);
    }

    // Each kernel is one long-counted loop over 16-byte (or one-vector) chunks of codes, offsets affine in the
    // induction variable, as in MlxKernels; scales are reloaded when a chunk starts a group.

    /** 4-bit affine: 16 code bytes = 32 values per chunk, G/32 chunks per group. */
    private static void affine4(MemorySegment codes, long c, MemorySegment scales, long s, MemorySegment biases, long b,
                                int type, long groups, int gs, MemorySegment dst, long d) {
        int sb = type == F32_TYPE ? 4 : 2;
        int shift = Integer.numberOfTrailingZeros(gs >>> 5);
        long mask = (gs >>> 5) - 1;
        long chunks = groups * (gs >>> 5);
        float sc = 0, bi = 0;
        for (long i = 0; i < chunks; i++) {
            if ((i & mask) == 0) {
                long g = i >>> shift;
                sc = scalar(scales, s + g * sb, type);
                bi = scalar(biases, b + g * sb, type);
            }
            ByteVector chunk = ByteVector.fromMemorySegment(BYTES16, codes, c + 16 * i, LE);
            long o = d + 128 * i;
            if (LANES == 16) {
                affineNibbles(chunk, DUP0, sc, bi).intoMemorySegment(dst, o, LE);
                affineNibbles(chunk, DUP1, sc, bi).intoMemorySegment(dst, o + 64, LE);
            } else {
                affineNibbles(chunk, DUP0, sc, bi).intoMemorySegment(dst, o, LE);
                affineNibbles(chunk, DUP1, sc, bi).intoMemorySegment(dst, o + 32, LE);
                affineNibbles(chunk, DUP2, sc, bi).intoMemorySegment(dst, o + 64, LE);
                affineNibbles(chunk, DUP3, sc, bi).intoMemorySegment(dst, o + 96, LE);
            }
        }
    }

    /**
     * The bf16 bits of the f32 {@code bits} in the low 16 bits of each lane (high 16 zero): the rounding of
     * {@code VectorCastLoops.toBf16} (round to nearest even; a NaN keeps its sign and top payload bits and is
     * made quiet). Written out here, not called there: a call from these kernels into that class was not inlined
     * and boxed every vector (measured: 96 bytes allocated per vector, {@code MlxAllocationAndCopiesTest}).
     * {@code MlxVectorMatchesScalarPropertiesTest} holds the two to the same bytes.
     */
    private static IntVector bf16Bits(IntVector bits) {
        IntVector high = bits.lanewise(VectorOperators.LSHR, 16);
        IntVector rounded = bits.add(high.and(1)).add(0x7FFF).lanewise(VectorOperators.LSHR, 16);
        VectorMask<Integer> nan = bits.and(0x7FFF_FFFF).compare(VectorOperators.GT, 0x7F80_0000);
        return rounded.blend(high.or(0x0040), nan);
    }

    /**
     * Lane {@code k} of {@code bytes} holds code byte {@code k} (two nibbles: values {@code 2k} and {@code 2k+1});
     * returns, per lane, the bf16 of value {@code 2k} in the low half and of value {@code 2k+1} in the high half:
     * one little-endian int store writes both in stream order, so no shuffle nor narrowing convert is needed.
     */
    private static IntVector affineBf16Pairs(IntVector bytes, float sc, float bi) {
        FloatVector lo = ((FloatVector) bytes.and(15).convert(VectorOperators.I2F, 0)).mul(sc).add(bi);
        FloatVector hi = ((FloatVector) bytes.lanewise(VectorOperators.LSHR, 4).convert(VectorOperators.I2F, 0)).mul(sc).add(bi);
        return bf16Bits(lo.reinterpretAsInts()).or(bf16Bits(hi.reinterpretAsInts()).lanewise(VectorOperators.LSHL, 16));
    }

    /**
     * {@link #affine4} fused with the narrowing to bf16: the same f32 values ({@code f32(scale) * q + f32(bias)},
     * two roundings), rounded to bf16 in registers and written as LE bf16 at {@code dst@d}, 2 bytes per value; no
     * f32 is ever stored. Entry of its own ({@code MlxDequantizer}'s bf16 overload), the affine arguments of
     * {@link #run}.
     */
    static void affine4Bf16(MemorySegment codes, long c, MemorySegment scales, long s, MemorySegment biases, long b,
                            int type, long groups, int gs, MemorySegment dst, long d) {
        int sb = type == F32_TYPE ? 4 : 2;
        int shift = Integer.numberOfTrailingZeros(gs >>> 5);
        long mask = (gs >>> 5) - 1;
        long chunks = groups * (gs >>> 5);
        float sc = 0, bi = 0;
        for (long i = 0; i < chunks; i++) {
            if ((i & mask) == 0) {
                long g = i >>> shift;
                sc = scalar(scales, s + g * sb, type);
                bi = scalar(biases, b + g * sb, type);
            }
            ByteVector chunk = ByteVector.fromMemorySegment(BYTES16, codes, c + 16 * i, LE);
            long o = d + 64 * i;
            if (LANES == 16) {
                IntVector x = (IntVector) chunk.convertShape(VectorOperators.ZERO_EXTEND_B2I, INTS, 0);
                affineBf16Pairs(x, sc, bi).intoMemorySegment(dst, o, LE);
            } else {
                IntVector x0 = (IntVector) chunk.convertShape(VectorOperators.ZERO_EXTEND_B2I, INTS, 0);
                IntVector x1 = (IntVector) chunk.convertShape(VectorOperators.ZERO_EXTEND_B2I, INTS, 1);
                affineBf16Pairs(x0, sc, bi).intoMemorySegment(dst, o, LE);
                affineBf16Pairs(x1, sc, bi).intoMemorySegment(dst, o + 32, LE);
            }
        }
    }

    /** 8-bit affine: one vector of codes per chunk, G/LANES chunks per group. */
    private static void affine8(MemorySegment codes, long c, MemorySegment scales, long s, MemorySegment biases, long b,
                                int type, long groups, int gs, MemorySegment dst, long d) {
        int sb = type == F32_TYPE ? 4 : 2;
        int perGroup = gs / LANES;
        int shift = Integer.numberOfTrailingZeros(perGroup);
        long mask = perGroup - 1;
        long chunks = groups * perGroup;
        float sc = 0, bi = 0;
        for (long i = 0; i < chunks; i++) {
            if ((i & mask) == 0) {
                long g = i >>> shift;
                sc = scalar(scales, s + g * sb, type);
                bi = scalar(biases, b + g * sb, type);
            }
            ByteVector chunk = ByteVector.fromMemorySegment(BYTES_LANES, codes, c + LANES * i, LE);
            IntVector q = (IntVector) chunk.convertShape(VectorOperators.ZERO_EXTEND_B2I, INTS, 0);
            ((FloatVector) q.convert(VectorOperators.I2F, 0)).mul(sc).add(bi).intoMemorySegment(dst, d + 4L * LANES * i, LE);
        }
    }

    /**
     * nvfp4 / mxfp4: E2M1 codes times the group's scale decoded through {@code scaleTable}, times {@code global}.
     * 16-byte chunks; an nvfp4 range of an odd number of groups ends with half a chunk, done one value at a time.
     */
    private static void fp4(MemorySegment codes, long c, MemorySegment scales, long s, float[] scaleTable,
                            long groups, int gs, float global, MemorySegment dst, long d) {
        int gshift = Integer.numberOfTrailingZeros(gs);
        long elems = groups * gs;
        long chunks = elems >>> 5;
        for (long i = 0; i < chunks; i++) {
            ByteVector chunk = ByteVector.fromMemorySegment(BYTES16, codes, c + 16 * i, LE);
            long e = 32 * i;
            long o = d + 128 * i;
            float s0 = scaleTable[scales.get(U8, s + (e >>> gshift)) & 0xFF];
            float s1 = scaleTable[scales.get(U8, s + ((e + 16) >>> gshift)) & 0xFF];
            if (LANES == 16) {
                fp4Nibbles(chunk, DUP0, s0, global).intoMemorySegment(dst, o, LE);
                fp4Nibbles(chunk, DUP1, s1, global).intoMemorySegment(dst, o + 64, LE);
            } else {
                fp4Nibbles(chunk, DUP0, s0, global).intoMemorySegment(dst, o, LE);
                fp4Nibbles(chunk, DUP1, s0, global).intoMemorySegment(dst, o + 32, LE);
                fp4Nibbles(chunk, DUP2, s1, global).intoMemorySegment(dst, o + 64, LE);
                fp4Nibbles(chunk, DUP3, s1, global).intoMemorySegment(dst, o + 96, LE);
            }
        }
        for (long e = chunks << 5; e < elems; e++) {
            int q = (codes.get(U8, c + (e >>> 1)) >>> ((e & 1) << 2)) & 15;
            float sc = scaleTable[scales.get(U8, s + (e >>> gshift)) & 0xFF];
            dst.set(F32, d + 4 * e, E2M1[q] * sc * global);
        }
    }

    /**
     * mxfp8: E4M3 codes (one per byte) times the group's E8M0 scale, times {@code global}. MLX's E4M3 decoded with
     * integer lanes: exponent field {@code e > 0} gives bits {@code (code & 0x7F) << 20} plus {@code 120 << 23}
     * ({@code (1+m/8)*2^(e-7)}); {@code e = 0} gives {@code m * 2^-9}, exact in f32; the sign bit is moved to bit 31.
     * The same values as the {@link MlxFloatCodes} table, bit for bit.
     */
    private static void mxfp8(MemorySegment codes, long c, MemorySegment scales, long s,
                              long groups, int gs, float global, MemorySegment dst, long d) {
        int perGroup = gs / LANES;
        int shift = Integer.numberOfTrailingZeros(perGroup);
        long mask = perGroup - 1;
        long chunks = groups * perGroup;
        float sc = 0;
        for (long i = 0; i < chunks; i++) {
            if ((i & mask) == 0) sc = E8M0[scales.get(U8, s + (i >>> shift)) & 0xFF];
            ByteVector chunk = ByteVector.fromMemorySegment(BYTES_LANES, codes, c + LANES * i, LE);
            IntVector x = (IntVector) chunk.convertShape(VectorOperators.ZERO_EXTEND_B2I, INTS, 0);
            IntVector mag = x.and(0x7F);
            IntVector normal = mag.lanewise(VectorOperators.LSHL, 20).add(120 << 23);
            IntVector subnormal = ((FloatVector) mag.convert(VectorOperators.I2F, 0)).mul(0x1p-9f).reinterpretAsInts();
            VectorMask<Integer> isSub = mag.compare(VectorOperators.LT, 8);
            IntVector bits = normal.blend(subnormal, isSub).or(x.and(0x80).lanewise(VectorOperators.LSHL, 24));
            bits.reinterpretAsFloats().mul(sc).mul(global).intoMemorySegment(dst, d + 4L * LANES * i, LE);
        }
    }
}
