package dev.modelfs.view;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Per-thread native scratch space for chunk conversions. Kernels only ever see native segments
 * (mmapped blob in, native scratch out), which keeps their memory-access call sites monomorphic;
 * writing straight into a heap chunk made C2 fall back to slow, alignment-checking accessors
 * (measured: 0.07 GB/s for Q4_K to bf16 instead of several GB/s). Finished bytes are then moved into
 * the cached chunk with one bulk copy.
 */
final class Scratch {
    private static final ThreadLocal<MemorySegment[]> BUFFERS = ThreadLocal.withInitial(() -> new MemorySegment[2]);

    private Scratch() {}

    /** At least {@code bytes} bytes of this thread's f32 buffer (contents undefined). */
    static MemorySegment f32(long bytes) {
        return get(0, bytes);
    }

    /** At least {@code bytes} bytes of this thread's narrowed-output buffer (contents undefined). */
    static MemorySegment narrow(long bytes) {
        return get(1, bytes);
    }

    private static MemorySegment get(int which, long bytes) {
        MemorySegment[] b = BUFFERS.get();
        if (b[which] == null || b[which].byteSize() < bytes) {
            b[which] = Arena.ofAuto().allocate(Math.max(bytes, 1 << 20), 64);
        }
        return b[which];
    }
}
