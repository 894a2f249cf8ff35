package dev.modelfs.quant.ggml;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.F64;
import static dev.modelfs.format.LittleEndian.I16;
import static dev.modelfs.format.LittleEndian.I32;

import dev.modelfs.format.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/** F32, F16, BF16 and F64 element arrays ("blocks" of one element). */
final class PlainKernels {
    private PlainKernels() {}

    /** F32 → F32: a byte copy (keeps every bit, NaN payloads included). */
    static final GgmlKernel F32_K = new F32Kernel();

    static final class F32Kernel extends GgmlKernel {
        F32Kernel() {
            super(GgmlType.F32);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            MemorySegment.copy(src, s, dst, o, n * 4);
        }
    }

    static final GgmlKernel F16_K = new F16Kernel();

    static final class F16Kernel extends GgmlKernel {
        F16Kernel() {
            super(GgmlType.F16);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long i = 0; i < n; i++) {
                dst.set(F32, o + 4 * i, Float.float16ToFloat(src.get(I16, s + 2 * i)));
            }
        }
    }

    /** BF16: the 16 bits become the upper half of the f32 image (bit-exact, NaNs untouched). */
    static final GgmlKernel BF16_K = new BF16Kernel();

    static final class BF16Kernel extends GgmlKernel {
        BF16Kernel() {
            super(GgmlType.BF16);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long i = 0; i < n; i++) {
                dst.set(I32, o + 4 * i, src.get(I16, s + 2 * i) << 16);
            }
        }
    }

    /** F64: plain narrowing conversion (round to nearest even). */
    static final GgmlKernel F64_K = new F64Kernel();

    static final class F64Kernel extends GgmlKernel {
        F64Kernel() {
            super(GgmlType.F64);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            for (long i = 0; i < n; i++) {
                dst.set(F32, o + 4 * i, (float) src.get(F64, s + 8 * i));
            }
        }
    }
}
