package dev.modelfs.quant.ggml;

import static dev.modelfs.quant.ggml.VectorShapes.I;
import static dev.modelfs.quant.ggml.VectorShapes.L;
import static dev.modelfs.quant.ggml.VectorShapes.S;

import dev.modelfs.format.LittleEndian;
import dev.modelfs.format.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;

/**
 * Vector API versions of the F16 and BF16 → f32 kernels of {@link PlainKernels}, {@link VectorShapes#L} elements
 * per step and a scalar tail. BF16: the 16 bits become the upper half of the f32 image. F16: built from bits
 * (exact: every f16 is an f32), with the same NaNs as {@link Float#float16ToFloat} on this platform.
 */
final class VectorPlainKernels {
    private VectorPlainKernels() {}

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    static final GgmlKernel F16_K = new F16();
    static final GgmlKernel BF16_K = new BF16();

    static IntVector halvesToInts(MemorySegment src, long off) {
        return (IntVector) ShortVector.fromMemorySegment(S, src, off, LE).convertShape(VectorOperators.S2I, I, 0);
    }

    /** IEEE half → f32 image. */
    static final class F16 extends GgmlKernel {
        F16() {
            super(GgmlType.F16);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final long whole = n - n % L;
            for (long i = 0; i < whole; i += L) {
                final IntVector h = halvesToInts(src, s + 2 * i);
                final IntVector em = h.and(0x7FFF);
                final IntVector shifted = em.lanewise(VectorOperators.LSHL, 13);
                // finite values (zeros and subnormals included): exact rescaling by 2^(127-15)
                final IntVector finite = shifted.reinterpretAsFloats().mul(0x1p112f).reinterpretAsInts();
                final VectorMask<Integer> special = em.compare(VectorOperators.GE, 0x7C00);
                final VectorMask<Integer> nan = em.compare(VectorOperators.GT, 0x7C00);
                final IntVector infNan = shifted.or(0x7F80_0000).blend(shifted.or(0x7FC0_0000), nan);
                finite.blend(infNan, special).or(h.and(0x8000).lanewise(VectorOperators.LSHL, 16))
                        .intoMemorySegment(dst, o + 4 * i, LE);
            }
            for (long i = whole; i < n; i++) {
                dst.set(LittleEndian.F32, o + 4 * i, Float.float16ToFloat(src.get(LittleEndian.I16, s + 2 * i)));
            }
        }

        @Override
        public String toString() {
            return super.toString() + " (Vector API)";
        }
    }

    /** BF16: {@code bits << 16}. */
    static final class BF16 extends GgmlKernel {
        BF16() {
            super(GgmlType.BF16);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final long whole = n - n % L;
            for (long i = 0; i < whole; i += L) {
                halvesToInts(src, s + 2 * i).lanewise(VectorOperators.LSHL, 16).intoMemorySegment(dst, o + 4 * i, LE);
            }
            for (long i = whole; i < n; i++) {
                dst.set(LittleEndian.I32, o + 4 * i, src.get(LittleEndian.I16, s + 2 * i) << 16);
            }
        }

        @Override
        public String toString() {
            return super.toString() + " (Vector API)";
        }
    }
}
