package dev.modelfs.warmup;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.function.BooleanSupplier;
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

    /** Milliseconds the JIT compilers have spent compiling in this JVM so far (-1 when the JVM does not say). */
    public static long compileMillis() {
        CompilationMXBean c = ManagementFactory.getCompilationMXBean();
        return c != null && c.isCompilationTimeMonitoringSupported() ? c.getTotalCompilationTime() : -1;
    }

    /**
     * Runs {@code pass} until the JIT has nothing left to do for it: after each pass waits for the compilers to go
     * idle, and stops after a pass during which nothing was compiled (no compile time added, none queued; the JVM
     * reports compile time in whole milliseconds, so a pass whose few compiles add less than one counts as none), or
     * after {@code maxPasses} passes, or once {@code max} has passed; returns the passes run (at least one).
     * A method that a first pass compiles at a lower tier (C1 alone, while C2 is busy) reaches its final tier in the
     * later passes, not in a client's first read. Each pass runs on a new thread, as each of a server's workers
     * will: a thread's first call takes paths its later calls do not (its first thread-local lookup), and code
     * compiled without them would be thrown away (an uncommon trap) on the first call of each serving thread.
     * A pass's failure ({@link RuntimeException} or {@link Error}) is thrown here.
     */
    public static int settle(Runnable pass, int maxPasses, Duration max) throws InterruptedException {
        return settle(pass, maxPasses, max, () -> false);
    }

    /**
     * The same, running no further pass and ending a wait for the compilers once {@code stop} holds (a front end
     * stopping while its warm-up runs behind the served tree); the pass running then ends by its own stop condition.
     */
    public static int settle(Runnable pass, int maxPasses, Duration max, BooleanSupplier stop) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        int passes = 0;
        while (true) {
            long before = compileMillis();
            runOnNewThread(pass, passes);
            passes++;
            boolean compiled = pending() > 0;
            awaitIdle(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())), stop);
            compiled |= compileMillis() != before;
            if (!compiled || passes >= maxPasses || System.nanoTime() >= deadline || before < 0 || stop.getAsBoolean()) {
                return passes;
            }
        }
    }

    private static void runOnNewThread(Runnable pass, int n) throws InterruptedException {
        Throwable[] failed = new Throwable[1];
        Thread t = Thread.ofPlatform().name("modelfs-warmup-" + n).daemon().start(() -> {
            try {
                pass.run();
            } catch (RuntimeException | Error e) {
                failed[0] = e;
            }
        });
        try {
            t.join();
        } catch (InterruptedException e) {
            t.interrupt();
            throw e;
        }
        switch (failed[0]) {
            case null -> { }
            case RuntimeException e -> throw e;
            case Error e -> throw e;
            default -> throw new IllegalStateException(failed[0]);
        }
    }

    /**
     * Waits until no compile is running or queued, checked every 10 ms, for at most {@code max}; returns whether
     * the compilers went idle.
     */
    public static boolean awaitIdle(Duration max) throws InterruptedException {
        return awaitIdle(max, () -> false);
    }

    /** The same, ending the wait (false) once {@code stop} holds. */
    public static boolean awaitIdle(Duration max, BooleanSupplier stop) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (pending() > 0) {
            if (System.nanoTime() >= deadline || stop.getAsBoolean()) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }
}
