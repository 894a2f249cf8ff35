package dev.modelfs.quant.ggml;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I32;
import static dev.modelfs.quant.ggml.Le.Q4_0_F32;
import static dev.modelfs.quant.ggml.Le.S8_F32;
import static dev.modelfs.format.LittleEndian.I64;
import static dev.modelfs.quant.ggml.Le.f16;
import static dev.modelfs.quant.ggml.Le.put;
import static dev.modelfs.quant.ggml.Le.u8;

import dev.modelfs.format.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * The 32/64/128-element block types: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q1_0, Q2_0, IQ4_NL, MXFP4,
 * NVFP4 (docs/FORMATS.md §6.4; ggml-quants.c {@code dequantize_row_*}). All arithmetic is f32 in ggml's
 * order; Java never fuses multiply-add, so {@code x*d + m} rounds twice exactly like the C code
 * compiled without contraction (and like gguf-py).
 */
final class LegacyKernels {
    private LegacyKernels() {}

    static final GgmlKernel Q4_0_K = new Q4_0();
    static final GgmlKernel Q4_1_K = new Q4_1();
    static final GgmlKernel Q5_0_K = new Q5_0();
    static final GgmlKernel Q5_1_K = new Q5_1();
    static final GgmlKernel Q8_0_K = new Q8_0();
    static final GgmlKernel Q8_1_K = new Q8_1();
    static final GgmlKernel Q1_0_K = new Q1_0();
    static final GgmlKernel Q2_0_K = new Q2_0();
    static final GgmlKernel IQ4_NL_K = new IQ4_NL();
    static final GgmlKernel MXFP4_K = new MXFP4();
    static final GgmlKernel NVFP4_K = new NVFP4();

    /** {@code kvalues_iq4nl}. */
    static final int[] KVALUES_IQ4NL = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    /** {@code kvalues_fp4} (E2M1 doubled), shared by MXFP4 and NVFP4. */
    static final int[] KVALUES_FP4 = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

    /**
     * Q4_0 (32 elems, 18 B): {@code d:f16 @0, qs[16] @2}; {@code y[j] = (lo(qs[j]) - 8) * d},
     * {@code y[j+16] = (hi(qs[j]) - 8) * d}.
     */
    static final class Q4_0 extends GgmlKernel {
        Q4_0() {
            super(GgmlType.Q4_0);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final float[] code = Q4_0_F32;
            for (long b = 0; b < n; b++) {
                // per-block slices: one bounds check each, constant offsets inside (C2 scalar-replaces them)
                final MemorySegment in = src.asSlice(s + 18 * b, 18);
                final MemorySegment out = dst.asSlice(o + 128 * b, 128);
                final float d = f16(in, 0);
                for (int j = 0; j < 16; j++) {
                    final int q = u8(in, 2 + j);
                    out.set(F32, 4 * j, code[q & 0xF] * d);
                    out.set(F32, 64 + 4 * j, code[q >>> 4] * d);
                }
            }
        }
    }

    /** Q4_1 (32, 20 B): {@code d @0, m @2, qs[16] @4}; {@code y = nibble * d + m}. */
    static final class Q4_1 extends GgmlKernel {
        Q4_1() {
            super(GgmlType.Q4_1);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 20 * blk, 20);
                final MemorySegment out = dst.asSlice(o + 128 * blk, 128);
                final float d = f16(in, 0);
                final float m = f16(in, 2);
                for (int j = 0; j < 16; j++) {
                    final int b = u8(in, 4 + j);
                    put(out, 4 * j, (b & 0xF) * d + m);
                    put(out, 64 + 4 * j, (b >>> 4) * d + m);
                }
            }
        }
    }

    /** Q5_0 (32, 22 B): {@code d @0, qh:u32 @2, qs[16] @6}; {@code y = ((nibble | bit<<4) - 16) * d}. */
    static final class Q5_0 extends GgmlKernel {
        Q5_0() {
            super(GgmlType.Q5_0);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 22 * blk, 22);
                final MemorySegment out = dst.asSlice(o + 128 * blk, 128);
                final float d = f16(in, 0);
                final int qh = in.get(I32, 2);
                for (int j = 0; j < 16; j++) {
                    final int b = u8(in, 6 + j);
                    final int x0 = ((b & 0xF) | (((qh >>> j) & 1) << 4)) - 16;
                    final int x1 = ((b >>> 4) | (((qh >>> (j + 16)) & 1) << 4)) - 16;
                    put(out, 4 * j, x0 * d);
                    put(out, 64 + 4 * j, x1 * d);
                }
            }
        }
    }

    /** Q5_1 (32, 24 B): {@code d @0, m @2, qh:u32 @4, qs[16] @8}; {@code y = code * d + m}. */
    static final class Q5_1 extends GgmlKernel {
        Q5_1() {
            super(GgmlType.Q5_1);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 24 * blk, 24);
                final MemorySegment out = dst.asSlice(o + 128 * blk, 128);
                final float d = f16(in, 0);
                final float m = f16(in, 2);
                final int qh = in.get(I32, 4);
                for (int j = 0; j < 16; j++) {
                    final int b = u8(in, 8 + j);
                    final int x0 = (b & 0xF) | (((qh >>> j) & 1) << 4);
                    final int x1 = (b >>> 4) | (((qh >>> (j + 16)) & 1) << 4);
                    put(out, 4 * j, x0 * d + m);
                    put(out, 64 + 4 * j, x1 * d + m);
                }
            }
        }
    }

    /** Q8_0 (32, 34 B): {@code d @0, qs[32]:int8 @2}; {@code y = qs * d}. */
    static final class Q8_0 extends GgmlKernel {
        Q8_0() {
            super(GgmlType.Q8_0);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final float[] s8 = S8_F32;
            for (long b = 0; b < n; b++) {
                final MemorySegment in = src.asSlice(s + 34 * b, 34);
                final MemorySegment out = dst.asSlice(o + 128 * b, 128);
                final float d = f16(in, 0);
                for (int j = 0; j < 32; j++) {
                    out.set(F32, 4 * j, s8[u8(in, 2 + j)] * d);
                }
            }
        }
    }

    /** Q8_1 (32, 36 B): {@code d @0, s @2 (unused), qs[32]:int8 @4}; {@code y = qs * d}. */
    static final class Q8_1 extends GgmlKernel {
        Q8_1() {
            super(GgmlType.Q8_1);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final float[] s8 = S8_F32;
            for (long b = 0; b < n; b++) {
                final MemorySegment in = src.asSlice(s + 36 * b, 36);
                final MemorySegment out = dst.asSlice(o + 128 * b, 128);
                final float d = f16(in, 0);
                for (int j = 0; j < 32; j++) {
                    out.set(F32, 4 * j, s8[u8(in, 4 + j)] * d);
                }
            }
        }
    }

    /** Q1_0 (128, 18 B): {@code d @0, qs[16] @2}; element j = bit j ? d : -d. */
    static final class Q1_0 extends GgmlKernel {
        Q1_0() {
            super(GgmlType.Q1_0);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 18 * blk, 18);
                final MemorySegment out = dst.asSlice(o + 512 * blk, 512);
                final float d = f16(in, 0);
                final float negD = -d;
                for (int w = 0; w < 2; w++) {
                    final long bits = in.get(I64, 2 + 8 * w);
                    for (int j = 0; j < 64; j++) {
                        put(out, 256 * w + 4 * j, ((bits >>> j) & 1) != 0 ? d : negD);
                    }
                }
            }
        }
    }

    /** Q2_0 (64, 18 B): {@code d @0, qs[16] @2}; {@code code = (qs[j/4] >> 2(j%4)) & 3}, {@code y = (code - 1) * d}. */
    static final class Q2_0 extends GgmlKernel {
        Q2_0() {
            super(GgmlType.Q2_0);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 18 * blk, 18);
                final MemorySegment out = dst.asSlice(o + 256 * blk, 256);
                final float d = f16(in, 0);
                for (int w = 0; w < 2; w++) {
                    final long bits = in.get(I64, 2 + 8 * w);
                    for (int j = 0; j < 32; j++) {
                        put(out, 128 * w + 4 * j, ((int) ((bits >>> (2 * j)) & 3) - 1) * d);
                    }
                }
            }
        }
    }

    /** IQ4_NL (32, 18 B): {@code d @0, qs[16] @2}; {@code y[j] = d * K[lo]}, {@code y[j+16] = d * K[hi]}. */
    static final class IQ4_NL extends GgmlKernel {
        IQ4_NL() {
            super(GgmlType.IQ4_NL);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final int[] k = KVALUES_IQ4NL;
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 18 * blk, 18);
                final MemorySegment out = dst.asSlice(o + 128 * blk, 128);
                final float d = f16(in, 0);
                for (int j = 0; j < 16; j++) {
                    final int b = u8(in, 2 + j);
                    put(out, 4 * j, d * k[b & 0xF]);
                    put(out, 64 + 4 * j, d * k[b >>> 4]);
                }
            }
        }
    }

    /**
     * ggml_e8m0_to_fp32_half: {@code 2^(e-128)} built from bits ({@code e < 2}: subnormal); e = 255
     * gives 2^127 (finite), so codes with |value| ≥ 2 overflow to ±inf as in ggml.
     */
    static float e8m0Half(int e) {
        return Float.intBitsToFloat(e < 2 ? 0x0020_0000 << e : (e - 1) << 23);
    }

    /** MXFP4 (32, 17 B): {@code e:u8 @0 (E8M0), qs[16] @1}; {@code y = kvalues_fp4[code] * e8m0_half(e)}. */
    static final class MXFP4 extends GgmlKernel {
        MXFP4() {
            super(GgmlType.MXFP4);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final int[] k = KVALUES_FP4;
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 17 * blk, 17);
                final MemorySegment out = dst.asSlice(o + 128 * blk, 128);
                final float d = e8m0Half(u8(in, 0));
                for (int j = 0; j < 16; j++) {
                    final int b = u8(in, 1 + j);
                    put(out, 4 * j, k[b & 0xF] * d);
                    put(out, 64 + 4 * j, k[b >>> 4] * d);
                }
            }
        }
    }

    /**
     * ggml_ue4m3_to_fp32 for all 256 bytes: 0x00 and 0x7F → 0; else bit 7 is ignored and the E4M3
     * value {@code exp == 0 ? man·2^-9 : (1 + man/8)·2^(exp-7)} is halved (ggml's FP4 table is doubled).
     */
    static final float[] UE4M3_HALF = new float[256];

    static {
        for (int x = 0; x < 256; x++) {
            if (x == 0 || x == 0x7F) {
                UE4M3_HALF[x] = 0.0f;
                continue;
            }
            final int exp = (x >>> 3) & 0xF;
            final int man = x & 0x7;
            final float raw = exp == 0 ? Math.scalb((float) man, -9) : Math.scalb(1.0f + (float) man / 8.0f, exp - 7);
            UE4M3_HALF[x] = raw * 0.5f;
        }
    }

    /**
     * NVFP4 (64, 36 B): {@code d[4]:u8 @0 (UE4M3), qs[32] @4}; sub-block s uses {@code qs[8s..8s+7]}:
     * lo → elements 16s + 0..7, hi → 16s + 8..15; {@code y = kvalues_fp4[code] * ue4m3_half(d[s])}.
     */
    static final class NVFP4 extends GgmlKernel {
        NVFP4() {
            super(GgmlType.NVFP4);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final int[] k = KVALUES_FP4;
            final float[] scale = UE4M3_HALF;
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 36 * blk, 36);
                final MemorySegment out = dst.asSlice(o + 256 * blk, 256);
                for (int sb = 0; sb < 4; sb++) {
                    final float d = scale[u8(in, sb)];
                    final long yb = 64 * sb;
                    for (int j = 0; j < 8; j++) {
                        final int b = u8(in, 4 + 8 * sb + j);
                        put(out, yb + 4 * j, k[b & 0xF] * d);
                        put(out, yb + 32 + 4 * j, k[b >>> 4] * d);
                    }
                }
            }
        }
    }
}
