package dev.modelfs.quant;

import static dev.modelfs.format.LittleEndian.I16;
import static dev.modelfs.format.LittleEndian.I32;
import static dev.modelfs.format.LittleEndian.I64;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Objects;

/**
 * Scalar and bulk conversions between f32 and the 16-bit float formats (bf16, IEEE binary16).
 *
 * <p>Narrowing rounds to nearest, ties to even. Infinities stay infinities, NaN stays NaN with its
 * sign kept (bf16: the top 7 payload bits are kept and the quiet bit is set; f16: as
 * {@link Float#floatToFloat16}). Bulk methods read and write little-endian values at any alignment,
 * allocate nothing and are thread-safe. They run the implementation {@link Kernels#active()} chooses, or the one
 * passed explicitly (tests, benchmarks); both write identical bytes.
 */
public final class FloatCasts {

    private FloatCasts() {}

    /** f32 → bf16, round to nearest even; NaN becomes a quiet NaN with the same sign. */
    public static short f32ToBf16(float f) {
        return (short) bf16Bits(Float.floatToRawIntBits(f));
    }

    /** f32 → IEEE binary16, round to nearest even. */
    public static short f32ToF16(float f) {
        return Float.floatToFloat16(f);
    }

    /** bf16 → f32 (exact). */
    public static float bf16ToF32(short h) {
        return Float.intBitsToFloat(h << 16);
    }

    /** IEEE binary16 → f32 (exact). */
    public static float f16ToF32(short h) {
        return Float.float16ToFloat(h);
    }

    /** Converts {@code count} LE f32 values at {@code src@srcOff} to LE bf16 at {@code dst@dstOff}. */
    public static void f32ToBf16(MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long count) {
        f32ToBf16(src, srcOff, dst, dstOff, count, Kernels.active());
    }

    /**
     * As {@link #f32ToBf16(MemorySegment, long, MemorySegment, long, long)} with the given implementation.
     *
     * @throws IllegalStateException if {@code impl} is {@link Kernels.Impl#VECTOR} and vectors are unavailable
     */
    public static void f32ToBf16(MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long count,
                                 Kernels.Impl impl) {
        bulk(Kernels.isVector(impl) ? VectorLoops.BF16 : BF16_LOOPS, src, srcOff, dst, dstOff, count);
    }

    /** Converts {@code count} LE f32 values at {@code src@srcOff} to LE binary16 at {@code dst@dstOff}. */
    public static void f32ToF16(MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long count) {
        f32ToF16(src, srcOff, dst, dstOff, count, Kernels.active());
    }

    /**
     * As {@link #f32ToF16(MemorySegment, long, MemorySegment, long, long)} with the given implementation.
     *
     * @throws IllegalStateException if {@code impl} is {@link Kernels.Impl#VECTOR} and vectors are unavailable
     */
    public static void f32ToF16(MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long count,
                                Kernels.Impl impl) {
        bulk(Kernels.isVector(impl) ? VectorLoops.F16 : F16_LOOPS, src, srcOff, dst, dstOff, count);
    }

    private static final MethodType LOOP_TYPE = MethodType.methodType(void.class, MemorySegment.class, long.class,
            MemorySegment.class, long.class, long.class);

    /**
     * {@link FloatCastLoops} copies, one per (src, dst) segment class pair (see {@link SegmentKernelCopies}), and one
     * loop method per direction: a single loop switching on the direction was compiled for whichever direction ran
     * first and deoptimised into the interpreter for the other (measured: f32 to bf16 at 0.25 GB/s).
     */
    static final SegmentKernelCopies BF16_LOOPS = new SegmentKernelCopies(MethodHandles.lookup(), FloatCastLoops.class,
            "toBf16", LOOP_TYPE, 16);
    static final SegmentKernelCopies F16_LOOPS = new SegmentKernelCopies(MethodHandles.lookup(), FloatCastLoops.class,
            "toF16", LOOP_TYPE, 16);

    /** The vector loops; initialised (and {@code jdk.incubator.vector} linked) on first use only. */
    private static final class VectorLoops {
        static final SegmentKernelCopies BF16 = new SegmentKernelCopies(MethodHandles.lookup(), VectorCastLoops.class,
                "toBf16", LOOP_TYPE, 16);
        static final SegmentKernelCopies F16 = new SegmentKernelCopies(MethodHandles.lookup(), VectorCastLoops.class,
                "toF16", LOOP_TYPE, 16);
    }

    private static void bulk(SegmentKernelCopies loops, MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long count) {
        checkRanges(src, srcOff, dst, dstOff, count);
        if (count == 0) return;
        MethodHandle loop = loops.forSegments(src, dst);
        try {
            loop.invokeExact(src, srcOff, dst, dstOff, count);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    /** Rounds f32 bits to bf16 bits (low 16 bits of the result). */
    static int bf16Bits(int bits) {
        int rounded = (bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16;
        int quietNaN = (bits >>> 16) | 0x0040;
        return (bits & 0x7FFF_FFFF) > 0x7F80_0000 ? quietNaN : rounded;
    }

    private static void checkRanges(MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long count) {
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(dst, "dst");
        if (count < 0) throw new IllegalArgumentException("negative count " + count);
        if (count > Long.MAX_VALUE / 4) throw new IndexOutOfBoundsException("count too large " + count);
        Objects.checkFromIndexSize(srcOff, count * 4, src.byteSize());
        Objects.checkFromIndexSize(dstOff, count * 2, dst.byteSize());
    }
}

/** The bulk loops of {@link FloatCasts}, copied per segment-class pair by {@link SegmentKernelCopies}. */
final class FloatCastLoops {


    private FloatCastLoops() {}

    static void toBf16(MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long count) {
        long pairs = count >>> 1;
        for (long p = 0; p < pairs; p++) {      // two values per 64-bit load and 32-bit store
            long two = src.get(I64, srcOff + (p << 3));
            int lo = FloatCasts.bf16Bits((int) two);
            int hi = FloatCasts.bf16Bits((int) (two >>> 32));
            dst.set(I32, dstOff + (p << 2), (lo & 0xFFFF) | (hi << 16));
        }
        if ((count & 1) != 0) {
            long i = count - 1;
            dst.set(I16, dstOff + (i << 1), (short) FloatCasts.bf16Bits(src.get(I32, srcOff + (i << 2))));
        }
    }

    static void toF16(MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long count) {
        for (long i = 0; i < count; i++) {
            float f = Float.intBitsToFloat(src.get(I32, srcOff + (i << 2)));
            dst.set(I16, dstOff + (i << 1), Float.floatToFloat16(f));
        }
    }
}
