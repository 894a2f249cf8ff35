package dev.modelfs.quant.ggml;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I32;
import static dev.modelfs.format.LittleEndian.I64;
import static dev.modelfs.quant.ggml.Le.S8_F32;
import static dev.modelfs.quant.ggml.Le.Q3_K_F32;
import static dev.modelfs.quant.ggml.Le.Q6_K_F32;
import static dev.modelfs.quant.ggml.Le.U6_F32;
import static dev.modelfs.quant.ggml.Le.U8;
import static dev.modelfs.quant.ggml.Le.f16;
import static dev.modelfs.quant.ggml.Le.put;
import static dev.modelfs.quant.ggml.Le.u16;
import static dev.modelfs.quant.ggml.Le.u8;

import dev.modelfs.format.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * The 256-element super-block types: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ4_XS, TQ1_0, TQ2_0
 * (docs/FORMATS.md §6.4; ggml-quants.c {@code dequantize_row_*}), f32 arithmetic in ggml's order.
 */
final class KQuantKernels {
    private KQuantKernels() {}

    static final GgmlKernel Q2_K_K = new Q2_K();
    static final GgmlKernel Q3_K_K = new Q3_K();
    static final GgmlKernel Q4_K_K = new Q4_K();
    static final GgmlKernel Q5_K_K = new Q5_K();
    static final GgmlKernel Q6_K_K = new Q6_K();
    static final GgmlKernel Q8_K_K = new Q8_K();
    static final GgmlKernel IQ4_XS_K = new IQ4_XS();
    static final GgmlKernel TQ1_0_K = new TQ1_0();
    static final GgmlKernel TQ2_0_K = new TQ2_0();

    /**
     * Q2_K (256, 84 B): {@code scales[16] @0, qs[64] @16, d @80, dmin @82}. Sub-block s = 8h + 2j + u
     * (16 elements): {@code y[128h + 32j + 16u + l] = (d*lo(sc)) * ((qs[32h+16u+l] >> 2j) & 3) - dmin*hi(sc)}.
     */
    static final class Q2_K extends GgmlKernel {
        Q2_K() {
            super(GgmlType.Q2_K);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final float[] u = U6_F32;
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 84 * blk, 84);
                final MemorySegment out = dst.asSlice(o + 1024 * blk, 1024);
                final float d = f16(in, 80);
                final float min = f16(in, 82);
                for (int h = 0; h < 2; h++) {
                    for (int j = 0; j < 4; j++) {
                        for (int u2 = 0; u2 < 2; u2++) {
                            final int sc = u8(in, 8 * h + 2 * j + u2);
                            final float dl = d * (sc & 0xF);
                            final float ml = min * (sc >>> 4);
                            final long q = 16 + 32 * h + 16 * u2;
                            final long y = 4 * (128 * h + 32 * j + 16 * u2);
                            for (int w = 0; w < 2; w++) { // eight 2-bit codes per 64-bit word
                                final long codes = (in.get(I64, q + 8 * w) >>> (2 * j)) & 0x0303_0303_0303_0303L;
                                for (int t = 0; t < 8; t++) {
                                    put(out, y + 32 * w + 4 * t, dl * u[(int) (codes >>> (8 * t)) & 3] - ml);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /**
     * Q3_K (256, 110 B): {@code hmask[32] @0, qs[64] @32, scales[12] @96, d @108}; 16 six-bit scales;
     * {@code y = (d * (sc-32)) * (low - (hbit ? 0 : 4))}.
     */
    static final class Q3_K extends GgmlKernel {
        Q3_K() {
            super(GgmlType.Q3_K);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final float[] v = Q3_K_F32;
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 110 * blk, 110);
                final MemorySegment out = dst.asSlice(o + 1024 * blk, 1024);
                final float dAll = f16(in, 108);
                final long sc = 96;
                for (int h = 0; h < 2; h++) {
                    for (int j = 0; j < 4; j++) {
                        for (int u = 0; u < 2; u++) {
                            final int is = 8 * h + 2 * j + u;
                            final int scale = ((u8(in, sc + (is & 7)) >>> (4 * (is >>> 3))) & 0xF)
                                    | (((u8(in, sc + 8 + (is & 3)) >>> (2 * (is >>> 2))) & 3) << 4);
                            final float dl = dAll * (scale - 32);
                            final long q = 32 + 32 * h + 16 * u;
                            final long hm = 16 * u;
                            final int hshift = 4 * h + j;
                            final long y = 4 * (128 * h + 32 * j + 16 * u);
                            for (int w = 0; w < 2; w++) { // code = low | hbit << 2, eight per 64-bit word
                                final long low = (in.get(I64, q + 8 * w) >>> (2 * j)) & 0x0303_0303_0303_0303L;
                                final long hb = (in.get(I64, hm + 8 * w) >>> hshift) & 0x0101_0101_0101_0101L;
                                final long codes = low | (hb << 2);
                                for (int t = 0; t < 8; t++) {
                                    put(out, y + 32 * w + 4 * t, dl * v[(int) (codes >>> (8 * t)) & 7]);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /** get_scale_min_k4 packed as {@code sc | mn << 8}; {@code lo} = scales bytes 0..7, {@code hi} = bytes 8..11. */
    static int scaleMinK4(int j, long lo, int hi) {
        if (j < 4) {
            final int sc = (int) (lo >>> (8 * j)) & 63;
            final int mn = (int) (lo >>> (8 * (j + 4))) & 63;
            return sc | mn << 8;
        }
        final int qj4 = (hi >>> (8 * (j - 4))) & 0xFF; // scales[j + 4]
        final int qjm4 = (int) (lo >>> (8 * (j - 4))) & 0xFF; // scales[j - 4]
        final int qj = (int) (lo >>> (8 * j)) & 0xFF; // scales[j]
        final int sc = (qj4 & 0xF) | ((qjm4 >>> 6) << 4);
        final int mn = (qj4 >>> 4) | ((qj >>> 6) << 4);
        return sc | mn << 8;
    }

    /**
     * Q4_K (256, 144 B): {@code d @0, dmin @2, scales[12] @4, qs[128] @16}; sub-block s uses
     * {@code qs[32(s/2) ..]} low (s even) or high (s odd) nibbles: {@code y = (d*sc) * q - (dmin*mn)}.
     */
    static final class Q4_K extends GgmlKernel {
        Q4_K() {
            super(GgmlType.Q4_K);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final float[] u4 = U6_F32;
            for (long b = 0; b < n; b++) {
                final MemorySegment in = src.asSlice(s + 144 * b, 144);
                final MemorySegment out = dst.asSlice(o + 1024 * b, 1024);
                final float d = f16(in, 0);
                final float min = f16(in, 2);
                final long scLo = in.get(I64, 4);
                final int scHi = in.get(I32, 12);
                for (int c = 0; c < 4; c++) {
                    final int sm1 = scaleMinK4(2 * c, scLo, scHi);
                    final int sm2 = scaleMinK4(2 * c + 1, scLo, scHi);
                    final float d1 = d * (sm1 & 0xFF);
                    final float m1 = min * (sm1 >>> 8);
                    final float d2 = d * (sm2 & 0xFF);
                    final float m2 = min * (sm2 >>> 8);
                    final long q = 16 + 32 * c;
                    final long y = 256 * c;
                    for (int l = 0; l < 32; l++) {
                        final int v = u8(in, q + l);
                        out.set(F32, y + 4 * l, d1 * u4[v & 0xF] - m1);
                        out.set(F32, y + 128 + 4 * l, d2 * u4[v >>> 4] - m2);
                    }
                }
            }
        }
    }

    /**
     * Q5_K (256, 176 B): {@code d @0, dmin @2, scales[12] @4, qh[32] @16, qs[128] @48}; as Q4_K with
     * {@code code = nibble + 16 * ((qh[l] >> s) & 1)}.
     */
    static final class Q5_K extends GgmlKernel {
        Q5_K() {
            super(GgmlType.Q5_K);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final float[] u = U6_F32;
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 176 * blk, 176);
                final MemorySegment out = dst.asSlice(o + 1024 * blk, 1024);
                final float d = f16(in, 0);
                final float min = f16(in, 2);
                final long scLo = in.get(I64, 4);
                final int scHi = in.get(I32, 12);
                for (int c = 0; c < 4; c++) {
                    final int sm1 = scaleMinK4(2 * c, scLo, scHi);
                    final int sm2 = scaleMinK4(2 * c + 1, scLo, scHi);
                    final float d1 = d * (sm1 & 0xFF);
                    final float m1 = min * (sm1 >>> 8);
                    final float d2 = d * (sm2 & 0xFF);
                    final float m2 = min * (sm2 >>> 8);
                    final long y = 256 * c;
                    for (int w = 0; w < 4; w++) { // 5-bit codes, eight per 64-bit word
                        final long q = in.get(I64, 48 + 32 * c + 8 * w);
                        final long qh = in.get(I64, 16 + 8 * w);
                        final long lo = (q & 0x0F0F_0F0F_0F0F_0F0FL) | (((qh >>> (2 * c)) & 0x0101_0101_0101_0101L) << 4);
                        final long hi = ((q >>> 4) & 0x0F0F_0F0F_0F0F_0F0FL)
                                | (((qh >>> (2 * c + 1)) & 0x0101_0101_0101_0101L) << 4);
                        final long yw = y + 32 * w;
                        for (int t = 0; t < 8; t++) {
                            put(out, yw + 4 * t, d1 * u[(int) (lo >>> (8 * t)) & 31] - m1);
                        }
                        for (int t = 0; t < 8; t++) {
                            put(out, yw + 128 + 4 * t, d2 * u[(int) (hi >>> (8 * t)) & 31] - m2);
                        }
                    }
                }
            }
        }
    }

    /**
     * Q6_K (256, 210 B): {@code ql[128] @0, qh[64] @128, scales[16]:int8 @192, d @208}; element group
     * g = i/16 uses {@code scales[g]}: {@code y = (d*scales[g]) * (q6 - 32)}.
     */
    static final class Q6_K extends GgmlKernel {
        Q6_K() {
            super(GgmlType.Q6_K);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final float[] code = Q6_K_F32;
            for (long b = 0; b < n; b++) {
                final MemorySegment in = src.asSlice(s + 210 * b, 210);
                final MemorySegment out = dst.asSlice(o + 1024 * b, 1024);
                final float d = f16(in, 208);
                for (int h = 0; h < 2; h++) {
                    final long ql = 64 * h;
                    final long qh = 128 + 32 * h;
                    final long sc = 192 + 8 * h;
                    final long y = 512 * h;
                    for (int w = 0; w < 4; w++) { // l = 8w .. 8w+7, scales[8h + l/16 + {0,2,4,6}]
                        final int k = w >>> 1;
                        final float s0 = d * in.get(U8, sc + k);
                        final float s2 = d * in.get(U8, sc + k + 2);
                        final float s4 = d * in.get(U8, sc + k + 4);
                        final float s6 = d * in.get(U8, sc + k + 6);
                        // eight 6-bit codes per long, byte t = element l + t of each quarter
                        final long a = in.get(I64, ql + 8 * w);
                        final long c = in.get(I64, ql + 32 + 8 * w);
                        final long hh = in.get(I64, qh + 8 * w);
                        final long c0 = (a & LO4) | ((hh & 0x0303_0303_0303_0303L) << 4);
                        final long c1 = (c & LO4) | ((hh & 0x0C0C_0C0C_0C0C_0C0CL) << 2);
                        final long c2 = ((a >>> 4) & LO4) | (hh & 0x3030_3030_3030_3030L);
                        final long c3 = ((c >>> 4) & LO4) | ((hh >>> 2) & 0x3030_3030_3030_3030L);
                        final long yw = y + 32 * w;
                        for (int t = 0; t < 8; t++) {
                            out.set(F32, yw + 4 * t, s0 * code[(int) (c0 >>> (8 * t)) & 63]);
                        }
                        for (int t = 0; t < 8; t++) {
                            out.set(F32, yw + 128 + 4 * t, s2 * code[(int) (c1 >>> (8 * t)) & 63]);
                        }
                        for (int t = 0; t < 8; t++) {
                            out.set(F32, yw + 256 + 4 * t, s4 * code[(int) (c2 >>> (8 * t)) & 63]);
                        }
                        for (int t = 0; t < 8; t++) {
                            out.set(F32, yw + 384 + 4 * t, s6 * code[(int) (c3 >>> (8 * t)) & 63]);
                        }
                    }
                }
            }
        }

        private static final long LO4 = 0x0F0F_0F0F_0F0F_0F0FL;
    }

    /** Q8_K (256, 292 B): {@code d:f32 @0, qs[256]:int8 @4, bsums @260 (unused)}; {@code y = d * qs}. */
    static final class Q8_K extends GgmlKernel {
        Q8_K() {
            super(GgmlType.Q8_K);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final float[] s8 = S8_F32;
            for (long b = 0; b < n; b++) {
                final MemorySegment in = src.asSlice(s + 292 * b, 292);
                final MemorySegment out = dst.asSlice(o + 1024 * b, 1024);
                final float d = in.get(F32, 0);
                for (int j = 0; j < 256; j++) {
                    out.set(F32, 4 * j, d * s8[u8(in, 4 + j)]);
                }
            }
        }
    }

    /**
     * IQ4_XS (256, 136 B): {@code d @0, scales_h:u16 @2, scales_l[4] @4, qs[128] @8}; sub-block b:
     * {@code dl = d * (ls - 32)}, lo → 32b + j, hi → 32b + 16 + j, value {@code dl * K[nibble]}.
     */
    static final class IQ4_XS extends GgmlKernel {
        IQ4_XS() {
            super(GgmlType.IQ4_XS);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final int[] k = LegacyKernels.KVALUES_IQ4NL;
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 136 * blk, 136);
                final MemorySegment out = dst.asSlice(o + 1024 * blk, 1024);
                final float d = f16(in, 0);
                final int scalesH = u16(in, 2);
                final int scalesL = in.get(I32, 4);
                for (int b = 0; b < 8; b++) {
                    final int ls = ((scalesL >>> (4 * b)) & 0xF) | (((scalesH >>> (2 * b)) & 3) << 4);
                    final float dl = d * (ls - 32);
                    final long q = 8 + 16 * b;
                    final long y = 128 * b;
                    for (int j = 0; j < 16; j++) {
                        final int v = u8(in, q + j);
                        put(out, y + 4 * j, dl * k[v & 0xF]);
                        put(out, y + 64 + 4 * j, dl * k[v >>> 4]);
                    }
                }
            }
        }
    }

    /**
     * TQ1_0 (256, 54 B): {@code qs[48] @0, qh[4] @48, d @52}; base-3 digit n of byte b:
     * {@code ((b * 3^n) & 0xFF) * 3 >> 8}, value {@code (digit - 1) * d}.
     */
    static final class TQ1_0 extends GgmlKernel {
        private static final int[] POW3 = {1, 3, 9, 27, 81, 243};

        TQ1_0() {
            super(GgmlType.TQ1_0);
        }

        private static int digit(int b, int n) {
            return (((b * POW3[n]) & 0xFF) * 3) >>> 8;
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 54 * blk, 54);
                final MemorySegment out = dst.asSlice(o + 1024 * blk, 1024);
                final float d = f16(in, 52);
                for (int p = 0; p < 5; p++) { // elements 0..159: 32p + m from qs[m]
                    for (int m = 0; m < 32; m++) {
                        put(out, 4 * (32 * p + m), (float) (digit(u8(in, m), p) - 1) * d);
                    }
                }
                for (int p = 0; p < 5; p++) { // elements 160..239: 160 + 16p + m from qs[32 + m]
                    for (int m = 0; m < 16; m++) {
                        put(out, 4 * (160 + 16 * p + m), (float) (digit(u8(in, 32 + m), p) - 1) * d);
                    }
                }
                for (int p = 0; p < 4; p++) { // elements 240..255: 240 + 4p + j from qh[j]
                    for (int j = 0; j < 4; j++) {
                        put(out, 4 * (240 + 4 * p + j), (float) (digit(u8(in, 48 + j), p) - 1) * d);
                    }
                }
            }
        }
    }

    /** TQ2_0 (256, 66 B): {@code qs[64] @0, d @64}; {@code y[128c + 32l + m] = (((qs[32c+m] >> 2l) & 3) - 1) * d}. */
    static final class TQ2_0 extends GgmlKernel {
        TQ2_0() {
            super(GgmlType.TQ2_0);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 66 * blk, 66);
                final MemorySegment out = dst.asSlice(o + 1024 * blk, 1024);
                final float d = f16(in, 64);
                for (int c = 0; c < 2; c++) {
                    for (int l = 0; l < 4; l++) {
                        for (int m = 0; m < 32; m++) {
                            final int q = (u8(in, 32 * c + m) >>> (2 * l)) & 3;
                            put(out, 4 * (128 * c + 32 * l + m), (float) (q - 1) * d);
                        }
                    }
                }
            }
        }
    }
}
