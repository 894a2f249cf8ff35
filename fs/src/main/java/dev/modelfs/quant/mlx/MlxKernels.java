package dev.modelfs.quant.mlx;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I16;
import static dev.modelfs.format.LittleEndian.I32;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The hot loops of {@link MlxDequantizer}. Arguments are validated by the caller; nothing here checks ranges
 * beyond what the segment accessors do.
 *
 * <p>Kept free of lambdas, string concatenation and nested classes: {@link dev.modelfs.quant.SegmentKernelCopies} defines copies of
 * this class as hidden classes, one per combination of segment classes, so that each has JIT profiles of its own.
 */
final class MlxKernels {

    static final int K_AFFINE_GENERIC = 0, K_AFFINE4 = 1, K_AFFINE8 = 2, K_NVFP4 = 3, K_MXFP4 = 4, K_MXFP8 = 5;
    /** Float scale types as the kernels see them ({@code -1} for U8). */
    static final int BF16 = 0, F16 = 1, F32_TYPE = 2;

    private static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;

    private static final float[] E2M1 = MlxFloatCodes.E2M1;
    private static final float[] E4M3 = MlxFloatCodes.E4M3;
    private static final float[] E8M0 = MlxFloatCodes.E8M0;

    private MlxKernels() {}

    /**
     * Dequantizes {@code groups} groups whose codes start at {@code codes@c}, scales at {@code scales@s}, biases
     * at {@code biases@b} (affine only) into f32 at {@code dst@d}.
     */
    static void run(int kind, MemorySegment codes, long c, MemorySegment scales, long s, MemorySegment biases, long b,
                    int type, long groups, int gs, int bits, float global, MemorySegment dst, long d) {
        switch (kind) {
            case K_AFFINE4 -> affine4(codes, c, scales, s, biases, b, type, groups, gs, dst, d);
            case K_AFFINE8 -> affine8(codes, c, scales, s, biases, b, type, groups, gs, dst, d);
            case K_AFFINE_GENERIC -> affineGeneric(codes, c, scales, s, biases, b, type, groups, gs, bits, dst, d);
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

    // ---- kernels -------------------------------------------------------------------------------------------
    //
    // Each kernel is one long-counted loop over 8-byte chunks of codes for the whole range, with source and
    // destination offsets affine functions of the induction variable: C2 then hoists the segment checks out of
    // the loop, which nested per-group loops defeat (measured: 2x). Scales are reloaded when a chunk starts a
    // group. Tables replace int-to-float conversions; for 4-bit codes one table load per byte yields both nibbles.

    /** {@code (float) q} for every 8-bit code. */
    private static final float[] QF = new float[256];
    /** For every byte {@code b}: {@code (float) (b & 15)} at {@code 2b}, {@code (float) (b >>> 4)} at {@code 2b+1}. */
    private static final float[] QF_PAIRS = new float[512];
    /** For every byte {@code b}: E2M1 of its low nibble at {@code 2b}, of its high nibble at {@code 2b+1}. */
    private static final float[] E2M1_PAIRS = new float[512];

    static {
        for (int i = 0; i < 256; i++) {
            QF[i] = i;
            QF_PAIRS[2 * i] = i & 15;
            QF_PAIRS[2 * i + 1] = i >>> 4;
            E2M1_PAIRS[2 * i] = E2M1[i & 15];
            E2M1_PAIRS[2 * i + 1] = E2M1[i >>> 4];
        }
    }

    private static int u8(MemorySegment seg, long p) {
        return seg.get(U8, p) & 0xFF;
    }

    private static int pairIndex(MemorySegment seg, long p) {
        return (seg.get(U8, p) & 0xFF) << 1;
    }

    // Codes are read a byte at a time (one movzx each, no shifts): measured faster than peeling a 64-bit word.

    /** 4-bit affine: 16 codes per 64-bit word, G/16 words per group (G = 32, 64 or 128). */
    private static void affine4(MemorySegment codes, long c, MemorySegment scales, long s, MemorySegment biases, long b,
                                int type, long groups, int gs, MemorySegment dst, long d) {
        final float[] q = QF_PAIRS;
        int sb = type == F32_TYPE ? 4 : 2;
        int shift = Integer.numberOfTrailingZeros(gs >>> 4);
        long mask = (gs >>> 4) - 1;
        long words = groups * (gs >>> 4);
        float sc = 0, bi = 0;
        for (long i = 0; i < words; i++) {
            if ((i & mask) == 0) {
                long g = i >>> shift;
                sc = scalar(scales, s + g * sb, type);
                bi = scalar(biases, b + g * sb, type);
            }
            long p = c + 8 * i;
            long o = d + 64 * i;
            // x_k = 2 * byte k: index of that byte's (low nibble, high nibble) pair in the table
            int x0 = pairIndex(codes, p), x1 = pairIndex(codes, p + 1);
            int x2 = pairIndex(codes, p + 2), x3 = pairIndex(codes, p + 3);
            int x4 = pairIndex(codes, p + 4), x5 = pairIndex(codes, p + 5);
            int x6 = pairIndex(codes, p + 6), x7 = pairIndex(codes, p + 7);
            dst.set(F32, o, q[x0] * sc + bi);
            dst.set(F32, o + 4, q[x0 + 1] * sc + bi);
            dst.set(F32, o + 8, q[x1] * sc + bi);
            dst.set(F32, o + 12, q[x1 + 1] * sc + bi);
            dst.set(F32, o + 16, q[x2] * sc + bi);
            dst.set(F32, o + 20, q[x2 + 1] * sc + bi);
            dst.set(F32, o + 24, q[x3] * sc + bi);
            dst.set(F32, o + 28, q[x3 + 1] * sc + bi);
            dst.set(F32, o + 32, q[x4] * sc + bi);
            dst.set(F32, o + 36, q[x4 + 1] * sc + bi);
            dst.set(F32, o + 40, q[x5] * sc + bi);
            dst.set(F32, o + 44, q[x5 + 1] * sc + bi);
            dst.set(F32, o + 48, q[x6] * sc + bi);
            dst.set(F32, o + 52, q[x6 + 1] * sc + bi);
            dst.set(F32, o + 56, q[x7] * sc + bi);
            dst.set(F32, o + 60, q[x7 + 1] * sc + bi);
        }
    }

    /** 8-bit affine: 8 codes per 64-bit word, G/8 words per group. */
    private static void affine8(MemorySegment codes, long c, MemorySegment scales, long s, MemorySegment biases, long b,
                                int type, long groups, int gs, MemorySegment dst, long d) {
        final float[] q = QF;
        int sb = type == F32_TYPE ? 4 : 2;
        int shift = Integer.numberOfTrailingZeros(gs >>> 3);
        long mask = (gs >>> 3) - 1;
        long words = groups * (gs >>> 3);
        float sc = 0, bi = 0;
        for (long i = 0; i < words; i++) {
            if ((i & mask) == 0) {
                long g = i >>> shift;
                sc = scalar(scales, s + g * sb, type);
                bi = scalar(biases, b + g * sb, type);
            }
            long p = c + 8 * i;
            long o = d + 32 * i;
            dst.set(F32, o, q[u8(codes, p)] * sc + bi);
            dst.set(F32, o + 4, q[u8(codes, p + 1)] * sc + bi);
            dst.set(F32, o + 8, q[u8(codes, p + 2)] * sc + bi);
            dst.set(F32, o + 12, q[u8(codes, p + 3)] * sc + bi);
            dst.set(F32, o + 16, q[u8(codes, p + 4)] * sc + bi);
            dst.set(F32, o + 20, q[u8(codes, p + 5)] * sc + bi);
            dst.set(F32, o + 24, q[u8(codes, p + 6)] * sc + bi);
            dst.set(F32, o + 28, q[u8(codes, p + 7)] * sc + bi);
        }
    }

    /** Widths 2, 3, 5, 6 (any 1..8 works): 8 codes occupy exactly {@code bits} bytes of the LE bit stream. */
    private static void affineGeneric(MemorySegment codes, long c, MemorySegment scales, long s, MemorySegment biases,
                                      long b, int type, long groups, int gs, int bits, MemorySegment dst, long d) {
        final float[] q = QF;
        int sb = type == F32_TYPE ? 4 : 2;
        int shift = Integer.numberOfTrailingZeros(gs >>> 3);
        long gmask = (gs >>> 3) - 1;
        int mask = (1 << bits) - 1;
        long chunks = groups * (gs >>> 3);
        float sc = 0, bi = 0;
        for (long i = 0; i < chunks; i++) {
            if ((i & gmask) == 0) {
                long g = i >>> shift;
                sc = scalar(scales, s + g * sb, type);
                bi = scalar(biases, b + g * sb, type);
            }
            long v = chunk(codes, c + i * bits, bits);
            long o = d + 32 * i;
            for (int k = 0; k < 8; k++) {
                dst.set(F32, o + 4 * k, q[(int) (v >>> (k * bits)) & mask] * sc + bi);
            }
        }
    }

    /** The {@code bits} bytes at {@code p} as a little-endian number (never reads past them). */
    private static long chunk(MemorySegment codes, long p, int bits) {
        return switch (bits) {
            case 2 -> codes.get(I16, p) & 0xFFFFL;
            case 3 -> (codes.get(I16, p) & 0xFFFFL) | (codes.get(U8, p + 2) & 0xFFL) << 16;
            case 5 -> (codes.get(I32, p) & 0xFFFF_FFFFL) | (codes.get(U8, p + 4) & 0xFFL) << 32;
            case 6 -> (codes.get(I32, p) & 0xFFFF_FFFFL) | (codes.get(I16, p + 4) & 0xFFFFL) << 32;
            default -> {
                long v = 0;
                for (int j = 0; j < bits; j++) v |= (codes.get(U8, p + j) & 0xFFL) << (j << 3);
                yield v;
            }
        };
    }

    /** nvfp4 / mxfp4: E2M1 codes (16 per 64-bit word) times a per-group scale decoded through {@code scaleTable}. */
    private static void fp4(MemorySegment codes, long c, MemorySegment scales, long s, float[] scaleTable,
                            long groups, int gs, float global, MemorySegment dst, long d) {
        if (global != 1f) {
            fp4Global(codes, c, scales, s, scaleTable, groups, gs, global, dst, d);
            return;
        }
        final float[] lut = E2M1_PAIRS;
        int shift = Integer.numberOfTrailingZeros(gs >>> 4);
        long mask = (gs >>> 4) - 1;
        long words = groups * (gs >>> 4);
        float sc = 0;
        for (long i = 0; i < words; i++) {
            if ((i & mask) == 0) sc = scaleTable[scales.get(U8, s + (i >>> shift)) & 0xFF];
            long p = c + 8 * i;
            long o = d + 64 * i;
            // x_k = 2 * byte k: index of that byte's (low nibble, high nibble) pair in the table
            int x0 = pairIndex(codes, p), x1 = pairIndex(codes, p + 1);
            int x2 = pairIndex(codes, p + 2), x3 = pairIndex(codes, p + 3);
            int x4 = pairIndex(codes, p + 4), x5 = pairIndex(codes, p + 5);
            int x6 = pairIndex(codes, p + 6), x7 = pairIndex(codes, p + 7);
            dst.set(F32, o, lut[x0] * sc);
            dst.set(F32, o + 4, lut[x0 + 1] * sc);
            dst.set(F32, o + 8, lut[x1] * sc);
            dst.set(F32, o + 12, lut[x1 + 1] * sc);
            dst.set(F32, o + 16, lut[x2] * sc);
            dst.set(F32, o + 20, lut[x2 + 1] * sc);
            dst.set(F32, o + 24, lut[x3] * sc);
            dst.set(F32, o + 28, lut[x3 + 1] * sc);
            dst.set(F32, o + 32, lut[x4] * sc);
            dst.set(F32, o + 36, lut[x4 + 1] * sc);
            dst.set(F32, o + 40, lut[x5] * sc);
            dst.set(F32, o + 44, lut[x5 + 1] * sc);
            dst.set(F32, o + 48, lut[x6] * sc);
            dst.set(F32, o + 52, lut[x6 + 1] * sc);
            dst.set(F32, o + 56, lut[x7] * sc);
            dst.set(F32, o + 60, lut[x7 + 1] * sc);
        }
    }

    /** As {@link #fp4}, then times the global scale: {@code (E2M1 * scale) * global}, two f32 roundings. */
    private static void fp4Global(MemorySegment codes, long c, MemorySegment scales, long s, float[] scaleTable,
                                  long groups, int gs, float global, MemorySegment dst, long d) {
        final float[] lut = E2M1;
        int shift = Integer.numberOfTrailingZeros(gs >>> 3);
        long mask = (gs >>> 3) - 1;
        long words = groups * (gs >>> 3);
        float sc = 0;
        for (long i = 0; i < words; i++) {
            if ((i & mask) == 0) sc = scaleTable[scales.get(U8, s + (i >>> shift)) & 0xFF];
            int w = codes.get(I32, c + 4 * i);
            long o = d + 32 * i;
            for (int k = 0; k < 8; k++) {
                dst.set(F32, o + 4 * k, lut[(w >>> (4 * k)) & 15] * sc * global);
            }
        }
    }

    /** mxfp8: E4M3 codes (one per byte) times an E8M0 scale per group (then the global scale if not 1). */
    private static void mxfp8(MemorySegment codes, long c, MemorySegment scales, long s,
                              long groups, int gs, float global, MemorySegment dst, long d) {
        final float[] lut = E4M3;
        final float[] e8 = E8M0;
        int shift = Integer.numberOfTrailingZeros(gs >>> 2);
        long mask = (gs >>> 2) - 1;
        long words = groups * (gs >>> 2);
        float sc = 0;
        if (global == 1f) {
            long lwords = groups * (gs >>> 3);
            int lshift = Integer.numberOfTrailingZeros(gs >>> 3);
            long lmask = (gs >>> 3) - 1;
            for (long i = 0; i < lwords; i++) {
                if ((i & lmask) == 0) sc = e8[scales.get(U8, s + (i >>> lshift)) & 0xFF];
                long p = c + 8 * i;
                long o = d + 32 * i;
                dst.set(F32, o, lut[u8(codes, p)] * sc);
                dst.set(F32, o + 4, lut[u8(codes, p + 1)] * sc);
                dst.set(F32, o + 8, lut[u8(codes, p + 2)] * sc);
                dst.set(F32, o + 12, lut[u8(codes, p + 3)] * sc);
                dst.set(F32, o + 16, lut[u8(codes, p + 4)] * sc);
                dst.set(F32, o + 20, lut[u8(codes, p + 5)] * sc);
                dst.set(F32, o + 24, lut[u8(codes, p + 6)] * sc);
                dst.set(F32, o + 28, lut[u8(codes, p + 7)] * sc);
            }
        } else {
            for (long i = 0; i < words; i++) {
                if ((i & mask) == 0) sc = e8[scales.get(U8, s + (i >>> shift)) & 0xFF];
                int w = codes.get(I32, c + 4 * i);
                long o = d + 16 * i;
                for (int k = 0; k < 4; k++) {
                    dst.set(F32, o + 4 * k, lut[(w >>> (8 * k)) & 0xFF] * sc * global);
                }
            }
        }
    }
}
