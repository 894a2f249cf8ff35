package dev.modelfs.telemetry;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * The CPU time of the calling thread, for {@link Telemetry#conversion}.
 *
 * <p>Invariant: {@link #threadNanos()} is monotonic per thread and allocates nothing; it is 0 when the
 * JVM cannot measure thread CPU time (then conversions report no CPU time).
 */
public final class CpuClock {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final boolean SUPPORTED = THREADS.isCurrentThreadCpuTimeSupported();

    private CpuClock() {}

    /** CPU time the calling thread used so far, in nanoseconds. */
    public static long threadNanos() {
        return SUPPORTED ? THREADS.getCurrentThreadCpuTime() : 0;
    }
}
