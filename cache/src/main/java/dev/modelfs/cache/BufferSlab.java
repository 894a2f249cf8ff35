package dev.modelfs.cache;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One reserved range of anonymous memory handed out as fixed-size buffers: the chunk cache's 1 MiB buffers.
 * Unlike {@link Arena#allocate}, which zero-fills every buffer it returns (a write pass over fresh pages before
 * the conversion writes them again), the range comes from {@code mmap}, whose pages the kernel zeroes on first
 * touch; and nothing is touched at reservation, so resident memory grows only as buffers are written.
 * (Transparent huge pages were measured too, with {@code madvise(MADV_HUGEPAGE)}: with this kernel's
 * {@code defrag=madvise} a fault may compact memory first, and first reads got slower; BENCHMARKS.md.)
 *
 * <p>Invariants: the range is {@code MAP_NORESERVE} and lives exactly as long as the arena given to
 * {@link #reserve} (closing the arena unmaps it; a buffer used after that fails with
 * {@link IllegalStateException}, never touches unmapped memory); {@link #next()} hands out each buffer at most
 * once, aligned to its size, and returns null once the range is used up (the caller allocates elsewhere).
 */
final class BufferSlab {
    private static final int PROT_READ = 1;
    private static final int PROT_WRITE = 2;
    private static final int MAP_PRIVATE = 0x02;
    private static final int MAP_ANONYMOUS = 0x20;
    private static final int MAP_NORESERVE = 0x4000;
    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;
    private static final MethodHandle MADVISE;
    /** {@code madvise} advice (Linux 5.14): fault the range in, writable, now. */
    private static final int MADV_POPULATE_WRITE = 23;
    private static final long PAGE = 4096;

    static {
        Linker linker = Linker.nativeLinker();
        var libc = linker.defaultLookup();
        MMAP = linker.downcallHandle(libc.find("mmap").orElseThrow(), FunctionDescriptor.of(ValueLayout.ADDRESS,
                ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_LONG));
        MUNMAP = linker.downcallHandle(libc.find("munmap").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
        MADVISE = linker.downcallHandle(libc.find("madvise").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    }

    private final MemorySegment range;
    private final long bufferBytes;
    private final AtomicLong next = new AtomicLong();

    private BufferSlab(MemorySegment range, long bufferBytes) {
        this.range = range;
        this.bufferBytes = bufferBytes;
    }

    /**
     * Reserves room for {@code buffers} buffers of {@code bufferBytes} (a power of two, at most the alignment
     * {@code mmap} gives, or aligned by skipping) for the life of {@code arena}; null when there is nothing to
     * reserve or the kernel refuses the mapping.
     */
    static BufferSlab reserve(long buffers, long bufferBytes, Arena arena) {
        if (buffers <= 0 || Long.bitCount(bufferBytes) != 1 || buffers > Long.MAX_VALUE / bufferBytes - 1) {
            return null;
        }
        long bytes = buffers * bufferBytes;
        long length = bytes + bufferBytes;                     // room to align the first buffer
        MemorySegment base;
        try {
            base = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, length, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0L);
        } catch (Throwable t) {
            return null;
        }
        long address = base.address();
        if (address == -1L || address == 0L) {                // MAP_FAILED
            return null;
        }
        MemorySegment mapping = base.reinterpret(length, arena, s -> unmap(address, length));
        long skip = (bufferBytes - address % bufferBytes) % bufferBytes;
        return new BufferSlab(mapping.asSlice(skip, bytes), bufferBytes);
    }

    private static void unmap(long address, long length) {
        try {
            int ignored = (int) MUNMAP.invokeExact(MemorySegment.ofAddress(address), length);
        } catch (Throwable t) {
            // the process keeps the range
        }
    }

    /**
     * Up to {@code count} buffers never handed out before, their pages already faulted in (one
     * {@code madvise(MADV_POPULATE_WRITE)} per buffer, or a write per page where the kernel lacks it): a
     * conversion that writes one later takes no page fault. Fewer (none) once the range is used up.
     */
    List<MemorySegment> nextPopulated(int count) {
        List<MemorySegment> out = new ArrayList<>(Math.max(0, count));
        for (int i = 0; i < count; i++) {
            MemorySegment b = next();
            if (b == null) {
                break;
            }
            out.add(b);
        }
        for (MemorySegment b : out) {
            int r;
            try {
                r = (int) MADVISE.invokeExact(b, b.byteSize(), MADV_POPULATE_WRITE);
            } catch (Throwable t) {
                r = -1;
            }
            if (r != 0) {
                for (long at = 0; at < b.byteSize(); at += PAGE) {
                    b.set(ValueLayout.JAVA_BYTE, at, (byte) 0);
                }
            }
        }
        return out;
    }

    /** A buffer never handed out before, or null when the range is used up. */
    MemorySegment next() {
        long at = next.getAndAdd(bufferBytes);
        if (at > range.byteSize() - bufferBytes) {
            return null;                                       // used up (the counter stays past the end)
        }
        return range.asSlice(at, bufferBytes);
    }
}
