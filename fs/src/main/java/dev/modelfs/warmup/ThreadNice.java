package dev.modelfs.warmup;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.logging.Logger;

/**
 * Lowers the CPU priority of the calling thread only: Linux keeps a nice value per thread, and
 * {@code setpriority(PRIO_PROCESS, gettid(), 19)} sets it (Java's thread priorities are ignored there).
 *
 * <p>Invariants: never raises a priority; a failure (another OS, a missing symbol) leaves the thread as
 * it was, with one fine-level log line.
 */
final class ThreadNice {
    private static final Logger LOG = Logger.getLogger(ThreadNice.class.getName());
    private static final int PRIO_PROCESS = 0;
    private static final int LOWEST = 19;

    private ThreadNice() {}

    /** Gives the calling thread nice 19. */
    static void lowest() {
        try {
            Linker linker = Linker.nativeLinker();
            var libc = linker.defaultLookup();
            MethodHandle gettid = linker.downcallHandle(libc.find("gettid").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT));
            MethodHandle setpriority = linker.downcallHandle(libc.find("setpriority").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
            int tid = (int) gettid.invokeExact();
            int rc = (int) setpriority.invokeExact(PRIO_PROCESS, tid, LOWEST);
            if (rc != 0) {
                LOG.fine("setpriority failed for thread " + tid);
            }
        } catch (Throwable e) {
            LOG.fine("cannot lower the warm-up thread's priority: " + e);
        }
    }

    /** The calling thread's nice value as Linux reports it ({@code /proc/thread-self/stat}, field 19), or -100. */
    static int current() {
        try {
            String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/thread-self/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Integer.parseInt(f[16]);
        } catch (java.io.IOException | RuntimeException e) {
            return -100;
        }
    }
}
