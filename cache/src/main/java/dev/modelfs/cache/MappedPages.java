package dev.modelfs.cache;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Brings the pages of a file mapping into memory from native code, {@code madvise(MADV_POPULATE_READ)} (Linux 5.14),
 * before Java code reads them. A Java thread that touches a mapped page the disk does not deliver waits in the page
 * fault while the JVM counts it as running Java code: every safepoint (a garbage collection, a deoptimization, a
 * thread dump) then waits for it, and with the safepoint every other thread of the process. A stalled store disk
 * would so freeze the whole server, listings and files held in memory included (the soak of stop 43 saw an NFS server
 * answer nothing, and refuse a thread dump, while a conversion waited on a stalled blob). In native code the same
 * wait holds only the calling thread.
 *
 * <p>Invariants: never throws and never allocates; {@link #populate} returns true when every page of the range was
 * made resident, false when the kernel refused (a page that cannot be read, which makes it {@code EFAULT}: the
 * caller's own read then takes the fault where it is reported as an error; a kernel without the advice); a page may
 * still leave the page cache between this call and the caller's read (a window of microseconds).
 */
public final class MappedPages {
    /** {@code madvise} advice (Linux 5.14): fault the range in, readable, now. */
    private static final int MADV_POPULATE_READ = 22;
    private static final long PAGE = 4096;
    /** {@code madvise(addr, length, advice)}, the address passed as a number: no segment made per call. */
    private static final MethodHandle MADVISE;

    static {
        Linker linker = Linker.nativeLinker();
        MADVISE = linker.downcallHandle(linker.defaultLookup().find("madvise").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    }

    private MappedPages() {
    }

    /**
     * Makes bytes {@code [from, to)} of the mapping {@code mapped} resident (whole pages, from the page holding
     * {@code from}); true when it did. A segment that is not a mapping, or an empty range, is left alone (true).
     */
    public static boolean populate(MemorySegment mapped, long from, long to) {
        long end = Math.min(to, mapped.byteSize());
        if (!mapped.isMapped() || end <= from || from < 0) {
            return true;
        }
        long start = (mapped.address() + from) & -PAGE;       // a mapping starts on a page: so does this, within it
        try {
            return (int) MADVISE.invokeExact(start, mapped.address() + end - start, MADV_POPULATE_READ) == 0;
        } catch (Throwable e) {
            return false;
        }
    }
}
