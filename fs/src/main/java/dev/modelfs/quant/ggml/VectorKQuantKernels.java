package dev.modelfs.quant.ggml;

import static dev.modelfs.format.LittleEndian.I16;
import static dev.modelfs.format.LittleEndian.I32;
import static dev.modelfs.format.LittleEndian.I64;
import static dev.modelfs.quant.ggml.KQuantKernels.scaleMinK4;
import static dev.modelfs.quant.ggml.Le.U8;
import static dev.modelfs.quant.ggml.VectorLegacyKernels.bytesToInts;
import static dev.modelfs.quant.ggml.VectorLegacyKernels.toFloats;
import static dev.modelfs.quant.ggml.VectorShapes.F;
import static dev.modelfs.quant.ggml.VectorShapes.L;

import dev.modelfs.format.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Vector API versions of the super-block kernels Q4_K, Q5_K and Q6_K of {@link KQuantKernels}. The per-sub-block
 * scales are computed exactly as there, as scalars ({@code d * sc} and {@code dmin * m} each rounded to f32 first),
 * then broadcast; the codes load {@link VectorShapes#L} bytes at a time and widen to f32. Same operations in the
 * same order ({@code (d*sc) * q - (dmin*m)}: a multiply and a subtract, never an FMA), so the bytes are identical.
 */
final class VectorKQuantKernels {
    private VectorKQuantKernels() {}

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    static final GgmlKernel Q4_K_K = new Q4_K();
    static final GgmlKernel Q5_K_K = new Q5_K();
    static final GgmlKernel Q6_K_K = new Q6_K();

    /** Q4_K: sub-blocks 2c / 2c+1 use the low / high nibbles of {@code qs[32c .. 32c+31]}. */
    static final class Q4_K extends GgmlKernel {
        Q4_K() {
            super(GgmlType.Q4_K);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long b = 0; b < n; b++) {
                final long in = s + 144 * b;
                final long out = o + 1024 * b;
                final float d = Float.float16ToFloat(src.get(I16, in));
                final float min = Float.float16ToFloat(src.get(I16, in + 2));
                final long scLo = src.get(I64, in + 4);
                final int scHi = src.get(I32, in + 12);
                for (int c = 0; c < 4; c++) {
                    final int sm1 = scaleMinK4(2 * c, scLo, scHi);
                    final int sm2 = scaleMinK4(2 * c + 1, scLo, scHi);
                    final FloatVector d1 = FloatVector.broadcast(F, d * (sm1 & 0xFF));
                    final FloatVector m1 = FloatVector.broadcast(F, min * (sm1 >>> 8));
                    final FloatVector d2 = FloatVector.broadcast(F, d * (sm2 & 0xFF));
                    final FloatVector m2 = FloatVector.broadcast(F, min * (sm2 >>> 8));
                    final long q = in + 16 + 32 * c;
                    final long y = out + 256 * c;
                    for (int l = 0; l < 32; l += L) {
                        final IntVector v = bytesToInts(src, q + l);
                        d1.mul(toFloats(v.and(0xF))).sub(m1).intoMemorySegment(dst, y + 4 * l, LE);
                        d2.mul(toFloats(v.lanewise(VectorOperators.LSHR, 4).and(0xF))).sub(m2)
                                .intoMemorySegment(dst, y + 128 + 4 * l, LE);
                    }
                }
            }
        }

        @Override
        public String toString() {
            return super.toString() + " (Vector API)";
        }
    }

    /** Q5_K: as Q4_K with {@code code = nibble | ((qh[l] >> s) & 1) << 4} for sub-block s. */
    static final class Q5_K extends GgmlKernel {
        Q5_K() {
            super(GgmlType.Q5_K);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long b = 0; b < n; b++) {
                final long in = s + 176 * b;
                final long out = o + 1024 * b;
                final float d = Float.float16ToFloat(src.get(I16, in));
                final float min = Float.float16ToFloat(src.get(I16, in + 2));
                final long scLo = src.get(I64, in + 4);
                final int scHi = src.get(I32, in + 12);
                for (int c = 0; c < 4; c++) {
                    final int sm1 = scaleMinK4(2 * c, scLo, scHi);
                    final int sm2 = scaleMinK4(2 * c + 1, scLo, scHi);
                    final FloatVector d1 = FloatVector.broadcast(F, d * (sm1 & 0xFF));
                    final FloatVector m1 = FloatVector.broadcast(F, min * (sm1 >>> 8));
                    final FloatVector d2 = FloatVector.broadcast(F, d * (sm2 & 0xFF));
                    final FloatVector m2 = FloatVector.broadcast(F, min * (sm2 >>> 8));
                    final long q = in + 48 + 32 * c;
                    final long y = out + 256 * c;
                    for (int l = 0; l < 32; l += L) {
                        final IntVector v = bytesToInts(src, q + l);
                        final IntVector h = bytesToInts(src, in + 16 + l).lanewise(VectorOperators.LSHR, 2 * c);
                        final IntVector lo = v.and(0xF).or(h.and(1).lanewise(VectorOperators.LSHL, 4));
                        final IntVector hi = v.lanewise(VectorOperators.LSHR, 4).and(0xF)
                                .or(h.and(2).lanewise(VectorOperators.LSHL, 3));
                        d1.mul(toFloats(lo)).sub(m1).intoMemorySegment(dst, y + 4 * l, LE);
                        d2.mul(toFloats(hi)).sub(m2).intoMemorySegment(dst, y + 128 + 4 * l, LE);
                    }
                }
            }
        }

        @Override
        public String toString() {
            return super.toString() + " (Vector API)";
        }
    }

    /**
     * Q6_K: for half h and l = 0..31, four 6-bit codes from {@code ql[64h + l]}, {@code ql[64h + 32 + l]} and
     * {@code qh[32h + l]} go to elements {@code 128h + l + 32k} with scale {@code d * scales[8h + l/16 + 2k]}.
     */
    static final class Q6_K extends GgmlKernel {
        Q6_K() {
            super(GgmlType.Q6_K);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long b = 0; b < n; b++) {
                final long in = s + 210 * b;
                final long out = o + 1024 * b;
                final float d = Float.float16ToFloat(src.get(I16, in + 208));
                for (int h = 0; h < 2; h++) {
                    final long ql = in + 64 * h;
                    final long qh = in + 128 + 32 * h;
                    final long sc = in + 192 + 8 * h;
                    final long y = out + 512 * h;
                    for (int l = 0; l < 32; l += L) {
                        final int g = l >>> 4;
                        final FloatVector s0 = FloatVector.broadcast(F, d * src.get(U8, sc + g));
                        final FloatVector s2 = FloatVector.broadcast(F, d * src.get(U8, sc + g + 2));
                        final FloatVector s4 = FloatVector.broadcast(F, d * src.get(U8, sc + g + 4));
                        final FloatVector s6 = FloatVector.broadcast(F, d * src.get(U8, sc + g + 6));
                        final IntVector a = bytesToInts(src, ql + l);
                        final IntVector c = bytesToInts(src, ql + 32 + l);
                        final IntVector hh = bytesToInts(src, qh + l);
                        final IntVector q0 = a.and(0xF).or(hh.and(0x03).lanewise(VectorOperators.LSHL, 4)).sub(32);
                        final IntVector q1 = c.and(0xF).or(hh.and(0x0C).lanewise(VectorOperators.LSHL, 2)).sub(32);
                        final IntVector q2 = a.lanewise(VectorOperators.LSHR, 4).and(0xF).or(hh.and(0x30)).sub(32);
                        final IntVector q3 = c.lanewise(VectorOperators.LSHR, 4).and(0xF)
                                .or(hh.lanewise(VectorOperators.LSHR, 2).and(0x30)).sub(32);
                        s0.mul(toFloats(q0)).intoMemorySegment(dst, y + 4 * l, LE);
                        s2.mul(toFloats(q1)).intoMemorySegment(dst, y + 128 + 4 * l, LE);
                        s4.mul(toFloats(q2)).intoMemorySegment(dst, y + 256 + 4 * l, LE);
                        s6.mul(toFloats(q3)).intoMemorySegment(dst, y + 384 + 4 * l, LE);
                    }
                }
            }
        }

        @Override
        public String toString() {
            return super.toString() + " (Vector API)";
        }
    }
}
