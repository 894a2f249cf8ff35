package dev.modelfs.testing;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * How a test waits: it polls a condition on the thing itself (a file readable, a log line written, a counter
 * moved, a thread parked) until the condition holds or a bound passes, and then either goes on or fails naming
 * what it waited for. Tests never sleep a fixed time and then assume something happened (issue 36); an assertion
 * that something is absent first waits for the event that would have produced it.
 *
 * <p>Invariants: the condition is evaluated at least once, also with a zero bound; a wait that fails has
 * evaluated it after the bound passed; an exception thrown by the condition ends the wait at once as a failure
 * (a condition that must tolerate a transient error catches it itself). Polls start 1 ms apart and back off to
 * 50 ms, so a short wait costs little and a long one little CPU.
 *
 * <p>Shared by every module's tests through the {@code modelfs-cache} test jar.
 */
public final class Poll {
    private static final long FIRST_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private Poll() {}

    /** A condition on the thing a test waits for. */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    /** Waits until {@code condition} holds; fails (naming {@code what}) once {@code bound} has passed without it. */
    public static void until(String what, Duration bound, Condition condition) throws InterruptedException {
        until(what, bound, condition, () -> "");
    }

    /**
     * Waits until {@code condition} holds; fails once {@code bound} has passed without it, with {@code what} and
     * {@code detail} (evaluated only then, e.g. the tail of a log).
     */
    public static void until(String what, Duration bound, Condition condition, Supplier<String> detail) throws InterruptedException {
        if (!within(bound, condition)) {
            String more = detail.get();
            throw new AssertionError(what + ": not within " + describe(bound) + (more.isEmpty() ? "" : "\n" + more));
        }
    }

    /** Waits until {@code condition} holds or {@code bound} has passed; whether it held. */
    public static boolean within(Duration bound, Condition condition) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        long pause = FIRST_NANOS;
        while (true) {
            boolean held;
            try {
                held = condition.holds();
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                throw new AssertionError("the condition failed: " + e, e);
            }
            if (held) {
                return true;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.sleep(Math.min(pause, left));   // the poll interval, not a wait for time itself
            pause = Math.min(MAX_NANOS, pause * 2);
        }
    }

    /**
     * Whether {@code thread} is parked (waiting, with or without a timeout) inside a method named {@code method}:
     * e.g. a thread blocked on a lock or future the test holds, proven to have reached that point.
     */
    public static boolean parkedIn(Thread thread, String method) {
        Thread.State s = thread.getState();
        if (s != Thread.State.WAITING && s != Thread.State.TIMED_WAITING) {
            return false;
        }
        for (StackTraceElement e : thread.getStackTrace()) {
            if (e.getMethodName().equals(method)) {
                return true;
            }
        }
        return false;
    }

    private static String describe(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }
}
