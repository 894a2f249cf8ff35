package dev.modelfs.cache;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The calling thread's scheduling priority (its nice value: on Linux every thread has its own), set from native code
 * with {@code setpriority(PRIO_PROCESS, gettid(), nice)}: a background thread at nice 19 gets a CPU only when no
 * thread of ordinary priority wants it, so work done ahead of readers never slows a reader or another program down.
 *
 * <p>Invariants: never throws; {@link #set} returns whether the kernel took the value; only the calling thread changes.
 */
public final class ThreadNice {
    /** The lowest priority: nice 19. */
    public static final int LOWEST = 19;
    private static final int PRIO_PROCESS = 0;
    private static final MethodHandle GETTID;
    private static final MethodHandle SETPRIORITY;
    private static final MethodHandle GETPRIORITY;

    static {
        Linker linker = Linker.nativeLinker();
        GETTID = linker.downcallHandle(linker.defaultLookup().find("gettid").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT));
        SETPRIORITY = linker.downcallHandle(linker.defaultLookup().find("setpriority").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        GETPRIORITY = linker.downcallHandle(linker.defaultLookup().find("getpriority").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    }

    private ThreadNice() {
    }

    /** Sets the calling thread's nice value to {@code nice}; whether the kernel took it. */
    public static boolean set(int nice) {
        try {
            return (int) SETPRIORITY.invokeExact(PRIO_PROCESS, (int) GETTID.invokeExact(), nice) == 0;
        } catch (Throwable e) {
            return false;
        }
    }

    /** The calling thread's nice value (-20 to 19); 0 when it cannot be read. */
    public static int get() {
        try {
            return (int) GETPRIORITY.invokeExact(PRIO_PROCESS, (int) GETTID.invokeExact());
        } catch (Throwable e) {
            return 0;
        }
    }
}
