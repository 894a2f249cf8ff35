package dev.modelfs.quant.ggml;

import static dev.modelfs.format.LittleEndian.I16;
import static dev.modelfs.quant.ggml.VectorShapes.B;
import static dev.modelfs.quant.ggml.VectorShapes.F;
import static dev.modelfs.quant.ggml.VectorShapes.I;
import static dev.modelfs.quant.ggml.VectorShapes.L;

import dev.modelfs.format.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Vector API versions of the 32-element legacy kernels Q4_0, Q4_1 and Q8_0 of {@link LegacyKernels}: the same f32
 * operations in the same order (codes widen exactly to f32; multiply, then add as a separate rounding, never an
 * FMA), so the bytes are identical. Each block's f16 scale is read as a scalar and broadcast; its codes load
 * {@link VectorShapes#L} at a time and widen byte → int → f32.
 */
final class VectorLegacyKernels {
    private VectorLegacyKernels() {}

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    static final GgmlKernel Q4_0_K = new Q4_0();
    static final GgmlKernel Q4_1_K = new Q4_1();
    static final GgmlKernel Q8_0_K = new Q8_0();

    /** {@code L} bytes at {@code off}, sign-extended to int lanes. */
    static IntVector bytesToInts(MemorySegment src, long off) {
        return (IntVector) ByteVector.fromMemorySegment(B, src, off, LE).convertShape(VectorOperators.B2I, I, 0);
    }

    static FloatVector toFloats(IntVector v) {
        return (FloatVector) v.convertShape(VectorOperators.I2F, F, 0);
    }

    /** Q4_0: {@code y[j] = (lo - 8) * d}, {@code y[j+16] = (hi - 8) * d}. */
    static final class Q4_0 extends GgmlKernel {
        Q4_0() {
            super(GgmlType.Q4_0);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long b = 0; b < n; b++) {
                final long in = s + 18 * b;
                final long out = o + 128 * b;
                final FloatVector d = FloatVector.broadcast(F, Float.float16ToFloat(src.get(I16, in)));
                for (int j = 0; j < 16; j += L) {
                    final IntVector q = bytesToInts(src, in + 2 + j);
                    toFloats(q.and(0xF).sub(8)).mul(d).intoMemorySegment(dst, out + 4 * j, LE);
                    toFloats(q.lanewise(VectorOperators.LSHR, 4).and(0xF).sub(8)).mul(d)
                            .intoMemorySegment(dst, out + 64 + 4 * j, LE);
                }
            }
        }

        @Override
        public String toString() {
            return super.toString() + " (Vector API)";
        }
    }

    /** Q4_1: {@code y = nibble * d + m} (two roundings). */
    static final class Q4_1 extends GgmlKernel {
        Q4_1() {
            super(GgmlType.Q4_1);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long b = 0; b < n; b++) {
                final long in = s + 20 * b;
                final long out = o + 128 * b;
                final FloatVector d = FloatVector.broadcast(F, Float.float16ToFloat(src.get(I16, in)));
                final FloatVector m = FloatVector.broadcast(F, Float.float16ToFloat(src.get(I16, in + 2)));
                for (int j = 0; j < 16; j += L) {
                    final IntVector q = bytesToInts(src, in + 4 + j);
                    toFloats(q.and(0xF)).mul(d).add(m).intoMemorySegment(dst, out + 4 * j, LE);
                    toFloats(q.lanewise(VectorOperators.LSHR, 4).and(0xF)).mul(d).add(m)
                            .intoMemorySegment(dst, out + 64 + 4 * j, LE);
                }
            }
        }

        @Override
        public String toString() {
            return super.toString() + " (Vector API)";
        }
    }

    /** Q8_0: {@code y = qs * d}. */
    static final class Q8_0 extends GgmlKernel {
        Q8_0() {
            super(GgmlType.Q8_0);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long b = 0; b < n; b++) {
                final long in = s + 34 * b;
                final long out = o + 128 * b;
                final FloatVector d = FloatVector.broadcast(F, Float.float16ToFloat(src.get(I16, in)));
                for (int j = 0; j < 32; j += L) {
                    toFloats(bytesToInts(src, in + 2 + j)).mul(d).intoMemorySegment(dst, out + 4 * j, LE);
                }
            }
        }

        @Override
        public String toString() {
            return super.toString() + " (Vector API)";
        }
    }
}
