package dev.modelfs.fuse;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import java.util.logging.Logger;

/**
 * How many FUSE workers wait for a request, and a new worker when the last one took one: the mount's workers grow
 * on demand, as libfuse's own multi-threaded loop does, so that requests waiting on a stalled store disk (a read of
 * a blob whose disk does not answer, an open or a model directory built over it) cannot take every worker, and a
 * listing, {@code stat} or read of anything else is answered meanwhile (docs/DESIGN.md §2.8, SEMANTICS.md "When
 * the store's disk fails"). Grown workers stay (an idle one costs a thread waiting in {@code /dev/fuse} and its
 * request buffer).
 *
 * <p>Invariants: at most {@code max} workers are ever started; {@link #taken} starts one more exactly when no
 * worker is left waiting and fewer than {@code max} exist; each {@link #taken} is followed by one {@link #done}
 * on the same thread. One log line when the workers first grow, one when they reach {@code max}.
 */
final class WorkerGrowth {
    private static final Logger LOG = Logger.getLogger(WorkerGrowth.class.getName());
    /** How many workers may be added to {@code --threads} while every one is busy. */
    static final int MORE_WORKERS = 64;
    /** Never grows: the warm-up's loop ({@link WorkerLoopWarmup}), which no kernel feeds. */
    static final WorkerGrowth NONE = new WorkerGrowth(Integer.MAX_VALUE, Integer.MAX_VALUE, n -> { });

    private final AtomicInteger waiting;
    private final AtomicInteger started;
    private final int max;
    private final IntConsumer start;
    private final AtomicBoolean grewLogged = new AtomicBoolean();
    private final AtomicBoolean fullLogged = new AtomicBoolean();

    /** {@code initial} workers waiting for requests, at most {@code max} in all; {@code start} starts worker number N. */
    WorkerGrowth(int initial, int max, IntConsumer start) {
        this.waiting = new AtomicInteger(initial);
        this.started = new AtomicInteger(initial);
        this.max = Math.max(initial, max);
        this.start = start;
    }

    /** A worker received a request: if no worker is left waiting for the next one, another is started. */
    void taken() {
        if (waiting.decrementAndGet() > 0) {
            return;
        }
        int n;
        do {
            n = started.get();
            if (n >= max) {
                if (fullLogged.compareAndSet(false, true)) {
                    LOG.warning("FUSE: all " + max + " workers are busy (requests waiting on the store's disk?): "
                            + "further requests wait for one");
                }
                return;
            }
        } while (!started.compareAndSet(n, n + 1));
        waiting.incrementAndGet();
        if (grewLogged.compareAndSet(false, true)) {
            LOG.info("FUSE: all " + n + " workers were busy at once: more start on demand (at most " + max
                    + "; a stalled store disk holds one per waiting request)");
        }
        start.accept(n);
    }

    /** The worker answered its request and waits for the next one. */
    void done() {
        waiting.incrementAndGet();
    }

    /** Workers started so far. */
    int started() {
        return started.get();
    }
}
