package dev.modelfs.warmup;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The JIT compilers' work in progress, as {@code jcmd PID Compiler.queue} reports it (the HotSpot diagnostic
 * command MBean): lets a warm-up wait until what it made hot has been compiled.
 *
 * <p>Invariants: read-only; a JVM without the diagnostic command (not HotSpot) counts as idle, so a wait
 * never outlasts its bound.
 */
public final class JitQueue {
    private JitQueue() {}

    /** Compiles running or queued now (0 when unknown). */
    public static int pending() {
        String text;
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName("com.sun.management:type=DiagnosticCommand");
            text = (String) server.invoke(name, "compilerQueue", new Object[] {null}, new String[] {String[].class.getName()});
        } catch (JMException | RuntimeException e) {
            return 0;
        }
        return count(text);
    }

    /** Compiles named by one {@code Compiler.queue} report: lines of its sections other than headers and "Empty". */
    static int count(String report) {
        int n = 0;
        for (String line : report.split("\n")) {
            String l = line.strip();
            if (!l.isEmpty() && !l.equals("Empty") && !l.endsWith(":")) {
                n++;
            }
        }
        return n;
    }

    /**
     * Waits until no compile is running or queued, checked every 10 ms, for at most {@code max}; returns whether
     * the compilers went idle.
     */
    public static boolean awaitIdle(Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (pending() > 0) {
            if (System.nanoTime() >= deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }
}
