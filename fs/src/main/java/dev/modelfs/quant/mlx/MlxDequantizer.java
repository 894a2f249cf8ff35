package dev.modelfs.quant.mlx;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * Dequantizes MLX-quantized tensors (FORMATS.md §5) to little-endian f32.
 *
 * <p>Group {@code g} of the flattened tensor holds elements {@code g*G .. g*G+G-1}; its codes start at
 * {@code codesOffset + g*codeBytesPerGroup()} (packed as a little-endian bit stream, §5.2), its scale
 * (and bias) is element {@code g} of the scale (bias) array.
 *
 * <ul>
 *   <li>affine: {@code f32(scale) * q} rounded to f32, then {@code + f32(bias)} rounded to f32;</li>
 *   <li>nvfp4: {@code E2M1(q) * E4M3(scale)}, then {@code * globalScale} if it is not 1;</li>
 *   <li>mxfp4: {@code E2M1(q) * E8M0(scale)}; mxfp8: {@code E4M3(q) * E8M0(scale)} (a global scale other than 1
 *       is applied the same way as for nvfp4).</li>
 * </ul>
 *
 * <p>Instances are immutable and thread-safe; {@link #dequantize} allocates nothing.
 */
public final class MlxDequantizer {

    private static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static final float[] E2M1 = MlxFloatCodes.E2M1;
    private static final float[] E4M3 = MlxFloatCodes.E4M3;
    private static final float[] E8M0 = MlxFloatCodes.E8M0;

    private static final int K_AFFINE_GENERIC = 0, K_AFFINE4 = 1, K_AFFINE8 = 2, K_NVFP4 = 3, K_MXFP4 = 4, K_MXFP8 = 5;

    private final MlxQuant quant;
    private final int kind;
    private final int groupSize;
    private final int codeBytes;

    private MlxDequantizer(MlxQuant q) {
        this.quant = q;
        this.groupSize = q.groupSize();
        this.codeBytes = q.codeBytesPerGroup();
        this.kind = switch (q.mode()) {
            case AFFINE -> q.bits() == 4 ? K_AFFINE4 : q.bits() == 8 ? K_AFFINE8 : K_AFFINE_GENERIC;
            case NVFP4 -> K_NVFP4;
            case MXFP4 -> K_MXFP4;
            case MXFP8 -> K_MXFP8;
        };
    }

    /** A dequantizer for {@code q}. */
    public static MlxDequantizer of(MlxQuant q) {
        return new MlxDequantizer(Objects.requireNonNull(q, "q"));
    }

    /** The parameters this instance decodes. */
    public MlxQuant quant() {
        return quant;
    }

    /**
     * Dequantizes groups {@code [firstGroup, firstGroup+groups)} into {@code groups * groupSize} LE f32 values
     * at {@code dst@dstOffset}. Offsets need no alignment.
     *
     * @throws IllegalArgumentException if the scale type does not fit the mode, biases are missing for affine
     *         data, or a global scale other than 1 is given for affine data
     * @throws IndexOutOfBoundsException if a range lies outside its segment
     */
    public void dequantize(MlxTensorData t, long firstGroup, long groups, MemorySegment dst, long dstOffset) {
        Objects.requireNonNull(t, "t");
        Objects.requireNonNull(dst, "dst");
        if (firstGroup < 0 || groups < 0) {
            throw new IllegalArgumentException("negative group range " + firstGroup + "+" + groups);
        }
        if (dstOffset < 0) throw new IndexOutOfBoundsException("negative dstOffset " + dstOffset);
        if (groups == 0) return;
        ScaleType st = t.scaleType();
        boolean affine = kind <= K_AFFINE8;
        if (affine) {
            if (st == ScaleType.U8) throw new IllegalArgumentException("affine scales must be BF16, F16 or F32, not U8");
            if (t.biases() == null) throw new IllegalArgumentException("affine data needs biases");
            if (t.globalScale() != 1f) throw new IllegalArgumentException("global scale given for affine data");
        } else if (st != ScaleType.U8) {
            throw new IllegalArgumentException(quant.canonicalName() + " scales must be U8, not " + st);
        }
        long lastGroup = Math.addExact(firstGroup, groups);
        checkRange(t.codes(), t.codesOffset(), lastGroup, codeBytes, "codes");
        checkRange(t.scales(), t.scalesOffset(), lastGroup, st.bytes(), "scales");
        if (affine) checkRange(t.biases(), t.biasesOffset(), lastGroup, st.bytes(), "biases");
        checkRange(dst, dstOffset, groups, groupSize * 4L, "dst");

        long c = t.codesOffset() + firstGroup * codeBytes;
        long s = t.scalesOffset() + firstGroup * st.bytes();
        switch (kind) {
            case K_AFFINE4 -> affine4(t.codes(), c, t.scales(), s, t.biases(), t.biasesOffset() + firstGroup * st.bytes(),
                    st.ordinal(), groups, groupSize, dst, dstOffset);
            case K_AFFINE8 -> affine8(t.codes(), c, t.scales(), s, t.biases(), t.biasesOffset() + firstGroup * st.bytes(),
                    st.ordinal(), groups, groupSize, dst, dstOffset);
            case K_AFFINE_GENERIC -> affineGeneric(t.codes(), c, t.scales(), s, t.biases(),
                    t.biasesOffset() + firstGroup * st.bytes(), st.ordinal(), groups, groupSize, quant.bits(), dst, dstOffset);
            case K_NVFP4 -> fp4(t.codes(), c, t.scales(), s, E4M3, groups, groupSize, t.globalScale(), dst, dstOffset);
            case K_MXFP4 -> fp4(t.codes(), c, t.scales(), s, E8M0, groups, groupSize, t.globalScale(), dst, dstOffset);
            case K_MXFP8 -> mxfp8(t.codes(), c, t.scales(), s, groups, groupSize, t.globalScale(), dst, dstOffset);
            default -> throw new AssertionError(kind);
        }
    }

    private static void checkRange(MemorySegment seg, long base, long count, long unit, String what) {
        long end = Math.addExact(base, Math.multiplyExact(count, unit));
        if (end > seg.byteSize()) {
            throw new IndexOutOfBoundsException(what + ": bytes [" + base + ", " + end + ") outside segment of "
                    + seg.byteSize() + " bytes");
        }
    }

    private static final int BF16 = 0, F16 = 1, F32_TYPE = 2; // ScaleType ordinals

    private static float scalar(MemorySegment seg, long off, int type) {
        if (type == BF16) return Float.intBitsToFloat(seg.get(I16, off) << 16);
        if (type == F16) return Float.float16ToFloat(seg.get(I16, off));
        return seg.get(F32, off);
    }

    // ---- affine ---------------------------------------------------------------------------------------------

    private static void affine4(MemorySegment codes, long c, MemorySegment scales, long s, MemorySegment biases, long b,
                                int type, long groups, int gs, MemorySegment dst, long d) {
        int sb = type == F32_TYPE ? 4 : 2;
        int words = gs >>> 4; // 16 codes per long
        for (long g = 0; g < groups; g++) {
            float sc = scalar(scales, s, type);
            float bi = scalar(biases, b, type);
            s += sb;
            b += sb;
            for (int w = 0; w < words; w++) {
                long v = codes.get(I64, c);
                c += 8;
                for (int k = 0; k < 64; k += 4) {
                    dst.set(F32, d, (float) ((int) (v >>> k) & 15) * sc + bi);
                    d += 4;
                }
            }
        }
    }

    private static void affine8(MemorySegment codes, long c, MemorySegment scales, long s, MemorySegment biases, long b,
                                int type, long groups, int gs, MemorySegment dst, long d) {
        int sb = type == F32_TYPE ? 4 : 2;
        int words = gs >>> 3; // 8 codes per long
        for (long g = 0; g < groups; g++) {
            float sc = scalar(scales, s, type);
            float bi = scalar(biases, b, type);
            s += sb;
            b += sb;
            for (int w = 0; w < words; w++) {
                long v = codes.get(I64, c);
                c += 8;
                for (int k = 0; k < 64; k += 8) {
                    dst.set(F32, d, (float) ((int) (v >>> k) & 0xFF) * sc + bi);
                    d += 4;
                }
            }
        }
    }

    /** Any width 1..8: 8 codes occupy exactly {@code bits} bytes of the little-endian bit stream. */
    private static void affineGeneric(MemorySegment codes, long c, MemorySegment scales, long s, MemorySegment biases,
                                      long b, int type, long groups, int gs, int bits, MemorySegment dst, long d) {
        int sb = type == F32_TYPE ? 4 : 2;
        int chunks = gs >>> 3;
        int mask = (1 << bits) - 1;
        for (long g = 0; g < groups; g++) {
            float sc = scalar(scales, s, type);
            float bi = scalar(biases, b, type);
            s += sb;
            b += sb;
            for (int ch = 0; ch < chunks; ch++) {
                long v = 0;
                for (int j = 0; j < bits; j++) {
                    v |= (codes.get(U8, c + j) & 0xFFL) << (j << 3);
                }
                c += bits;
                for (int k = 0; k < 8; k++) {
                    dst.set(F32, d, (float) ((int) (v >>> (k * bits)) & mask) * sc + bi);
                    d += 4;
                }
            }
        }
    }

    // ---- fp modes -------------------------------------------------------------------------------------------

    /** nvfp4 / mxfp4: E2M1 codes times a per-group scale decoded through {@code scaleTable}. */
    private static void fp4(MemorySegment codes, long c, MemorySegment scales, long s, float[] scaleTable,
                            long groups, int gs, float global, MemorySegment dst, long d) {
        final float[] lut = E2M1;
        int words = gs >>> 4;
        if (global == 1f) {
            for (long g = 0; g < groups; g++) {
                float sc = scaleTable[scales.get(U8, s + g) & 0xFF];
                for (int w = 0; w < words; w++) {
                    long v = codes.get(I64, c);
                    c += 8;
                    for (int k = 0; k < 64; k += 4) {
                        dst.set(F32, d, lut[(int) (v >>> k) & 15] * sc);
                        d += 4;
                    }
                }
            }
        } else {
            for (long g = 0; g < groups; g++) {
                float sc = scaleTable[scales.get(U8, s + g) & 0xFF];
                for (int w = 0; w < words; w++) {
                    long v = codes.get(I64, c);
                    c += 8;
                    for (int k = 0; k < 64; k += 4) {
                        dst.set(F32, d, lut[(int) (v >>> k) & 15] * sc * global);
                        d += 4;
                    }
                }
            }
        }
    }

    private static void mxfp8(MemorySegment codes, long c, MemorySegment scales, long s,
                              long groups, int gs, float global, MemorySegment dst, long d) {
        final float[] lut = E4M3;
        int words = gs >>> 3;
        for (long g = 0; g < groups; g++) {
            float sc = E8M0[scales.get(U8, s + g) & 0xFF];
            for (int w = 0; w < words; w++) {
                long v = codes.get(I64, c);
                c += 8;
                if (global == 1f) {
                    for (int k = 0; k < 64; k += 8) {
                        dst.set(F32, d, lut[(int) (v >>> k) & 0xFF] * sc);
                        d += 4;
                    }
                } else {
                    for (int k = 0; k < 64; k += 8) {
                        dst.set(F32, d, lut[(int) (v >>> k) & 0xFF] * sc * global);
                        d += 4;
                    }
                }
            }
        }
    }
}
