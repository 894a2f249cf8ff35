package dev.modelfs.quant;

import java.lang.foreign.MemorySegment;

/**
 * A little-endian float format that dequantized values are written in: f32 as computed, or narrowed
 * to bf16 / IEEE binary16 with one rounding to nearest even ({@link FloatCasts}).
 *
 * <p>Invariant: {@link #bytes} is the size of one value in this format.
 */
public enum FloatFormat {
    F32(4),
    F16(2),
    BF16(2);

    /** Bytes per value. */
    public final int bytes;

    FloatFormat(int bytes) {
        this.bytes = bytes;
    }

    /**
     * Writes {@code count} LE f32 values from {@code src@srcOff} to {@code dst@dstOff} in this format.
     * Allocates nothing; thread-safe.
     */
    public void fromF32(MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long count) {
        fromF32(src, srcOff, dst, dstOff, count, Kernels.active());
    }

    /** As {@link #fromF32(MemorySegment, long, MemorySegment, long, long)} with the casts of {@code impl}. */
    public void fromF32(MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long count, Kernels.Impl impl) {
        switch (this) {
            case F32 -> MemorySegment.copy(src, srcOff, dst, dstOff, count * 4);
            case F16 -> FloatCasts.f32ToF16(src, srcOff, dst, dstOff, count, impl);
            case BF16 -> FloatCasts.f32ToBf16(src, srcOff, dst, dstOff, count, impl);
        }
    }
}
