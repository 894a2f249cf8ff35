package dev.modelfs.convert;

import dev.modelfs.cache.MappedPages;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Touches the pages of a mapped blob range before a conversion kernel reads it (SEMANTICS.md "When the store's
 * disk fails"). A mapped page that cannot be read (the disk returns {@code EIO}, the file shrank: a lower
 * filesystem's short read makes the kernel believe the file ends there) raises {@code SIGBUS}; the JVM turns that
 * into an {@link InternalError} for plain memory-segment accesses, but not inside the Vector API's compiled loads,
 * where it ended the process. One read of a byte per page here takes the fault where it is an error, so the read
 * fails with {@code EIO} alone. Every family of converted data that reads mapped blob pages calls it on the range it
 * is about to read: {@link UnitSource.Blocks} (and {@link UnitSource.Shifted} through it), {@link UnitSource.MlxGroups}
 * and {@link UnitSource.Repacked} (codes, scales and biases, {@link MlxParts#touch}), {@link Gathered} (each source
 * range before its blocks are dequantized); {@code GuardedPagesTest} checks each over a blob that shrank.
 *
 * <p>The pages are first brought in from native code ({@link MappedPages#populate}): a page the store's disk is slow
 * to deliver then holds only this thread, never the JVM's safepoints (SEMANTICS.md "When the store's disk fails").
 *
 * <p>Invariants: reads one byte of every 4 KiB page of {@code [from, to)}, nothing else; a page dropped from the page
 * cache and failing between this touch and the kernel's read is not covered (a window of microseconds).
 */
final class GuardedPages {
    private static final long PAGE = 4096;

    private GuardedPages() {
    }

    /** Reads one byte of every page of {@code seg}'s bytes {@code [from, to)}; an unreadable page throws InternalError. */
    static void touch(MemorySegment seg, long from, long to) {
        if (!seg.isMapped() || to <= from) {
            return;
        }
        long end = Math.min(to, seg.byteSize());
        MappedPages.populate(seg, from, end);     // waits on the disk in native code, never holding the JVM's safepoints
        byte sink = 0;
        for (long p = from; p < end; p = (p / PAGE + 1) * PAGE) {
            sink ^= seg.get(ValueLayout.JAVA_BYTE, p);
        }
        if (end > from) {
            sink ^= seg.get(ValueLayout.JAVA_BYTE, end - 1);
        }
        SINK = sink;
    }

    /** Keeps the touches from being removed as dead code. */
    @SuppressWarnings("unused")
    private static volatile byte SINK;
}
