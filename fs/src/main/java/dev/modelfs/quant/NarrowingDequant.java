package dev.modelfs.quant;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Dequantizes a range of independent units (GGML blocks, MLX groups) straight into output of a
 * {@link FloatFormat}: the one call a converted read makes per chunk.
 *
 * <p>How: f32 output into a native destination is written in place. Otherwise the range is cut into
 * slices of about {@value #SLICE_ELEMENTS} elements; each slice is dequantized into a per-thread native
 * f32 scratch buffer small enough to stay in the core's cache, then narrowed (or copied) into the
 * destination, through a second per-thread native buffer when the destination is on the heap. Kernels
 * thus only ever see native segments, which keeps their memory-access call sites monomorphic (writing
 * straight into a heap segment once made C2 fall back to slow accessors: 0.07 GB/s for Q4_K to bf16).
 *
 * <p>Invariants: writes exactly {@code units * unitElements * format.bytes} bytes at
 * {@code dst@dstOffset}, the same bytes as dequantizing the whole range to f32 and narrowing it in one
 * go; allocates nothing after a thread's first call; thread-safe.
 */
public final class NarrowingDequant {
    /** Elements per slice: 64 KiB of f32, which stays in L2 between dequantizing and narrowing. */
    static final int SLICE_ELEMENTS = 16 * 1024;

    /** Per-thread native scratch: [0] f32 slice, [1] narrowed slice (heap destinations only). */
    private static final ThreadLocal<MemorySegment[]> SCRATCH = ThreadLocal.withInitial(() -> new MemorySegment[2]);

    private NarrowingDequant() {}

    /** Dequantizes units {@code [first, first+count)} to LE f32 at {@code f32@f32Offset}. */
    @FunctionalInterface
    public interface Units {
        void toF32(long first, long count, MemorySegment f32, long f32Offset);
    }

    /**
     * Dequantizes {@code blocks} blocks of {@code deq} starting at {@code src@srcOffset} into
     * {@code dst@dstOffset} in {@code format}.
     */
    public static void blocks(BlockDequantizer deq, MemorySegment src, long srcOffset, long blocks,
                              FloatFormat format, MemorySegment dst, long dstOffset) {
        Objects.requireNonNull(src, "src");
        long blockBytes = deq.blockBytes();
        units((first, n, f32, off) -> deq.dequantize(src, srcOffset + first * blockBytes, f32, off, n),
                blocks, deq.blockElements(), format, dst, dstOffset);
    }

    /**
     * Dequantizes units {@code [0, count)} of {@code units} ({@code unitElements} values each) into
     * {@code dst@dstOffset} in {@code format}.
     */
    public static void units(Units units, long count, int unitElements, FloatFormat format, MemorySegment dst, long dstOffset) {
        units(units, count, unitElements, format, dst, dstOffset, Kernels.active());
    }

    /**
     * As {@link #units(Units, long, int, FloatFormat, MemorySegment, long)}, narrowing with the casts of {@code impl}
     * (the caller's units choose their own kernels).
     */
    public static void units(Units units, long count, int unitElements, FloatFormat format, MemorySegment dst, long dstOffset,
                             Kernels.Impl impl) {
        Objects.requireNonNull(units, "units");
        Objects.requireNonNull(impl, "impl");
        Objects.requireNonNull(format, "format");
        if (count < 0 || unitElements <= 0) {
            throw new IllegalArgumentException("bad unit range: " + count + " x " + unitElements);
        }
        Objects.checkFromIndexSize(dstOffset, Math.multiplyExact(Math.multiplyExact(count, unitElements), (long) format.bytes),
                dst.byteSize());
        if (format == FloatFormat.F32 && dst.isNative()) {
            units.toF32(0, count, dst, dstOffset);
            return;
        }
        long perSlice = Math.max(1, SLICE_ELEMENTS / unitElements);
        long sliceElems = perSlice * unitElements;
        MemorySegment f32 = scratch(0, sliceElems * 4);
        MemorySegment narrow = dst.isNative() ? null : scratch(1, sliceElems * format.bytes);
        for (long first = 0; first < count; first += perSlice) {
            long n = Math.min(perSlice, count - first);
            long elems = n * unitElements;
            long at = dstOffset + first * unitElements * format.bytes;
            units.toF32(first, n, f32, 0);
            if (narrow == null) {
                format.fromF32(f32, 0, dst, at, elems, impl);
            } else {
                format.fromF32(f32, 0, narrow, 0, elems, impl);
                MemorySegment.copy(narrow, 0, dst, at, elems * format.bytes);
            }
        }
    }

    private static MemorySegment scratch(int which, long bytes) {
        MemorySegment[] b = SCRATCH.get();
        if (b[which] == null || b[which].byteSize() < bytes) {
            b[which] = Arena.ofAuto().allocate(bytes, 64);
        }
        return b[which];
    }
}
