package dev.modelfs.nfs;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

/**
 * The NFS server's call threads: {@code core} threads, grown on demand up to {@code max} when every thread is
 * busy (calls that wait on a stalled store disk: a READ of a blob whose disk does not answer, a LOOKUP that builds
 * a model directory over it), so that such calls cannot take every thread and a LOOKUP or READDIR of anything
 * else is answered meanwhile (docs/DESIGN.md §2.8, SEMANTICS.md "When the store's disk fails"). Grown threads end
 * after {@value #IDLE_SECONDS} s without a call.
 *
 * <p>Invariants: a call is handed to an idle thread if there is one, else to a new thread while fewer than
 * {@code max} run, else queued for the first thread that comes free; never refused while the pool runs. One log
 * line the first time the pool grows past {@code core}.
 */
final class GrowingWorkers {
    private static final Logger LOG = Logger.getLogger(GrowingWorkers.class.getName());
    static final int IDLE_SECONDS = 30;

    private GrowingWorkers() {
    }

    /** A queue that takes a call only when an idle thread waits for one, so the pool grows before it queues. */
    private static final class HandOff extends LinkedTransferQueue<Runnable> {
        @Override
        public boolean offer(Runnable r) {
            return tryTransfer(r);
        }

        /** Queues {@code r} for the next free thread (every thread is busy and the pool is at its bound). */
        void enqueue(Runnable r) {
            super.offer(r);
        }
    }

    /** A pool of {@code core} to {@code max} daemon threads named {@code prefix-N}. */
    static ExecutorService create(String prefix, int core, int max) {
        HandOff queue = new HandOff();
        AtomicInteger n = new AtomicInteger();
        AtomicInteger grownLogged = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(core, Math.max(core, max), IDLE_SECONDS, TimeUnit.SECONDS, queue,
                r -> {
                    Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                },
                (r, executor) -> {
                    if (!executor.isShutdown()) {
                        queue.enqueue(r);
                    }
                }) {
            @Override
            protected void beforeExecute(Thread t, Runnable r) {
                if (getPoolSize() > core && grownLogged.compareAndSet(0, 1)) {
                    LOG.info(prefix + ": all " + core + " call threads were busy at once: more start on demand (at most "
                            + getMaximumPoolSize() + "; a stalled store disk holds one per waiting call)");
                }
            }
        };
        return pool;
    }
}
