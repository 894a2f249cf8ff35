package dev.modelfs.warmup;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;

/**
 * A front end's warm-up run behind a tree that is already served (docs/DESIGN.md §2.8): started once the front end
 * serves and has said so, on a thread of its own ({@value #THREAD}), so that start-up does not grow with the load
 * of the machine or the size of the store; {@code done} (the release of the served tree's conversion gate) runs
 * when it ends, however it ends.
 *
 * <p>Invariants: the work runs once; {@code done} runs exactly once, after the work, even when the work throws;
 * {@link #stop} asks the work to stop (its stop condition then holds) without interrupting it, since the work's
 * read passes must end before the served tree's mappings are released, and returns only once it has ended or the
 * bound has passed.
 */
public final class BackgroundWarmup {
    private static final Logger LOG = Logger.getLogger(BackgroundWarmup.class.getName());
    /** The warm-up thread's name. */
    public static final String THREAD = "modelfs-warmup";

    /** The work: a warm-up that ends soon once {@code stop} holds. */
    @FunctionalInterface
    public interface Work {
        void run(BooleanSupplier stop);
    }

    private final Thread thread;
    private volatile boolean stopping;

    private BackgroundWarmup(Work work, Runnable done) {
        this.thread = Thread.ofPlatform().name(THREAD).daemon().unstarted(() -> {
            long t0 = System.nanoTime();
            try {
                work.run(() -> stopping);
            } catch (RuntimeException | Error e) {              // never a reason to stop serving
                LOG.fine("warm-up stopped: " + e);
            } finally {
                done.run();
                LOG.info(String.format("warm-up done %.2f s after serving began%s", (System.nanoTime() - t0) / 1e9,
                        stopping ? " (stopped)" : ""));
            }
        });
    }

    /** Starts {@code work} on its own thread; {@code done} runs when it ends. */
    public static BackgroundWarmup start(Work work, Runnable done) {
        BackgroundWarmup w = new BackgroundWarmup(work, done);
        w.thread.start();
        return w;
    }

    /** Whether the work still runs. */
    public boolean running() {
        return thread.isAlive();
    }

    /** Waits up to {@code max} for the work to end by itself; returns whether it has ended. */
    public boolean await(Duration max) throws InterruptedException {
        return thread.join(max);
    }

    /**
     * Asks the work to stop and waits up to {@code max} for it to end; returns whether it has ended (the caller may
     * then release what the work reads). An interrupt of the caller ends the wait (its status is kept; false).
     */
    public boolean stop(Duration max) {
        stopping = true;
        try {
            return thread.join(max);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
