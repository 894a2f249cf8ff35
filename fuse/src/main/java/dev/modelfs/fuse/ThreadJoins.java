package dev.modelfs.fuse;

import java.util.List;
import java.util.concurrent.TimeUnit;

/** Waiting for a mount's server threads with one deadline for all of them. */
final class ThreadJoins {
    private ThreadJoins() {}

    /**
     * Waits until every thread of {@code threads} has ended or {@link System#nanoTime()} reaches {@code deadline}:
     * true when all have ended; false when one still runs then, or the caller was interrupted (its flag set again).
     */
    static boolean all(List<Thread> threads, long deadline) {
        for (Thread t : threads) {
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            if (t.isAlive()) {
                return false;
            }
        }
        return true;
    }
}
