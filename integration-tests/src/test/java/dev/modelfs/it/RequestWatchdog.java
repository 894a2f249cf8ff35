package dev.modelfs.it;

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Times each request a test makes (one read of a mounted file, one NFS RPC, one listing) against a bound of its
 * own: a request still unanswered when its bound passes is reported at that moment, with the stack of the thread
 * that waits for it, whether or not it is ever answered. It measures requests only, never whole rounds of a
 * worker, so a deliberate pause or a server start (each awaited with a bound of its own) is never mistaken for
 * a lost request.
 *
 * <p>Invariants: every request started is ended exactly once (also when it throws); a late request is reported
 * once; the slowest latency per kind of request is kept for the test's summary.
 */
final class RequestWatchdog implements AutoCloseable {
    /** A request: its call, which may throw. */
    @FunctionalInterface
    interface Call<T> {
        T run() throws Exception;
    }

    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "request-watchdog");
        t.setDaemon(true);
        return t;
    });
    private final Consumer<String> onLate;
    private final Map<String, AtomicLong> slowestNanos = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();

    /** @param onLate told, once per request, of a request not answered within its bound */
    RequestWatchdog(Consumer<String> onLate) {
        this.onLate = onLate;
        timer.setRemoveOnCancelPolicy(true);                     // an answered request's timer goes at once
    }

    /** Runs request {@code what} (of kind {@code kind}, for the summary) and returns its result; reports it if it outlives {@code bound}. */
    <T> T time(String kind, String what, Duration bound, Call<T> call) throws Exception {
        Thread caller = Thread.currentThread();
        long t0 = System.nanoTime();
        ScheduledFuture<?> late = timer.schedule(() -> onLate.accept(what + ": not answered within " + bound.toSeconds()
                + " s (a request left unanswered); " + caller.getName() + " waits in:\n    "
                + Arrays.stream(caller.getStackTrace()).limit(25).map(String::valueOf).collect(Collectors.joining("\n    "))),
                bound.toNanos(), TimeUnit.NANOSECONDS);
        try {
            return call.run();
        } finally {
            late.cancel(false);
            long took = System.nanoTime() - t0;
            slowestNanos.computeIfAbsent(kind, k -> new AtomicLong()).accumulateAndGet(took, Math::max);
            counts.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
        }
    }

    /** Per kind of request: how many were answered and the slowest latency, e.g. {@code nfs-read: 812 (max 1.3 s)}. */
    String summary() {
        Map<String, String> out = new TreeMap<>();
        counts.forEach((k, n) -> out.put(k, n.get() + " (max " + String.format("%.1f", slowestNanos.get(k).get() / 1e9) + " s)"));
        return out.toString();
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
