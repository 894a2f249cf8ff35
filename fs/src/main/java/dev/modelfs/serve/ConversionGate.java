package dev.modelfs.serve;

/**
 * Holds the opening of converted files while a front end's warm-up runs behind a tree that is already served
 * (docs/DESIGN.md §2.8, docs/SEMANTICS.md "Start-up"): the tree, attributes and files without conversions are
 * served at once, and a converted file's open waits until the warm-up is done, so that its first read runs on
 * compiled kernels and does not compete with the warm-up for the CPUs, as when the mount appeared only after the
 * warm-up.
 *
 * <p>Invariants: a gate never held (or released) lets every {@link #await} pass at once with one volatile read;
 * a held gate lets it pass once {@link #release} is called or the deadline given to {@link #hold} has passed,
 * whichever comes first, so no open waits past the warm-up's own wall-clock end; an interrupt ends a wait early
 * (the interrupt status is kept). Thread-safe.
 */
public final class ConversionGate {
    private final Object lock = new Object();
    /** {@link System#nanoTime} until which opens wait; meaningful only while {@link #held}. */
    private long untilNanos;
    private volatile boolean held;

    /** A gate that lets every open pass until {@link #hold} is called. */
    public ConversionGate() {}

    /** From now on opens of converted files wait for {@link #release}, at most until {@code untilNanos} ({@link System#nanoTime}). */
    public void hold(long untilNanos) {
        synchronized (lock) {
            this.untilNanos = untilNanos;
            held = true;
        }
    }

    /** Lets every waiting and later open pass. Idempotent. */
    public void release() {
        synchronized (lock) {
            held = false;
            lock.notifyAll();
        }
    }

    /** Whether opens of converted files wait now (the deadline not considered). */
    public boolean held() {
        return held;
    }

    /**
     * Waits until the gate is released or its deadline passes; returns at once when it is not held. Returns
     * whether it was released (false: the deadline passed, or the thread was interrupted).
     */
    public boolean await() {
        if (!held) {
            return true;
        }
        synchronized (lock) {
            while (held) {
                long left = untilNanos - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                try {
                    lock.wait(Math.max(1, left / 1_000_000), 0);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
        }
    }
}
