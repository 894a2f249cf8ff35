package dev.modelfs.warmup;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * Gives the C heap's free memory back to the kernel once a warm-up is done ({@code malloc_trim(0)}, glibc). The
 * warm-up's passes each run on new threads, and glibc gives each new thread that allocates an arena of its own
 * (up to eight per core), whose freed blocks it keeps: without the trim the daemon stayed about 45 MiB larger
 * than its work needs (the RSS bounds of {@code HostileStoreTest} and {@code MemoryBudgetTest}).
 *
 * <p>Invariants: frees nothing in use; a C library without {@code malloc_trim} (musl) makes it a no-op.
 */
final class MallocTrim {
    private static final Optional<MethodHandle> TRIM = Linker.nativeLinker().defaultLookup().find("malloc_trim")
            .map(s -> Linker.nativeLinker().downcallHandle(s, FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG)));

    private MallocTrim() {}

    /** Trims every arena; returns whether the C library had {@code malloc_trim} (and it ran). */
    static boolean trim() {
        if (TRIM.isEmpty()) {
            return false;
        }
        try {
            int ignored = (int) TRIM.get().invokeExact(0L);
            return true;
        } catch (Throwable t) {
            return false;
        }
    }
}
