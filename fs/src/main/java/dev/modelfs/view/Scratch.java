package dev.modelfs.view;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Per-thread f32 scratch space for conversions that narrow after dequantizing, so a chunk
 * computation allocates nothing but its output.
 */
final class Scratch {
    private static final ThreadLocal<MemorySegment> F32 = new ThreadLocal<>();

    private Scratch() {}

    /** At least {@code bytes} bytes of this thread's scratch (contents undefined). */
    static MemorySegment f32(long bytes) {
        MemorySegment s = F32.get();
        if (s == null || s.byteSize() < bytes) {
            s = Arena.ofAuto().allocate(Math.max(bytes, 1 << 20), 64);
            F32.set(s);
        }
        return s;
    }
}
