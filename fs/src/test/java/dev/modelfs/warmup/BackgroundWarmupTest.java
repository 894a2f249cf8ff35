package dev.modelfs.warmup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link BackgroundWarmup}: {@code done} runs exactly once however the work ends; a stop is a flag the work sees. */
class BackgroundWarmupTest {
    @Test
    void doneRunsOnceAfterTheWork() throws Exception {
        AtomicInteger order = new AtomicInteger();
        AtomicInteger workAt = new AtomicInteger(-1);
        AtomicInteger doneAt = new AtomicInteger(-1);
        BackgroundWarmup w = BackgroundWarmup.start(stop -> workAt.set(order.getAndIncrement()), () -> doneAt.set(order.getAndIncrement()));
        assertTrue(w.await(Duration.ofSeconds(10)));
        assertFalse(w.running());
        assertEquals(0, workAt.get());
        assertEquals(1, doneAt.get(), "done after the work, once");
        assertEquals(2, order.get());
    }

    @Test
    void doneRunsWhenTheWorkThrows() throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        BackgroundWarmup w = BackgroundWarmup.start(stop -> {
            throw new IllegalStateException("a broken warm-up");
        }, done::countDown);
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertTrue(w.await(Duration.ofSeconds(10)));
    }

    @Test
    void stopSetsTheFlagTheWorkEndsByAndWaitsForIt() {
        CountDownLatch started = new CountDownLatch(1);
        AtomicInteger done = new AtomicInteger();
        AtomicInteger sawStop = new AtomicInteger();
        BackgroundWarmup w = BackgroundWarmup.start(stop -> {
            started.countDown();
            long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            while (!stop.getAsBoolean() && System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            if (stop.getAsBoolean()) {
                sawStop.incrementAndGet();
            }
        }, done::incrementAndGet);
        try {
            assertTrue(started.await(10, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        assertTrue(w.running(), "a work that waits for its stop still runs");
        assertTrue(w.stop(Duration.ofSeconds(30)), "ended within the bound");
        assertEquals(1, sawStop.get(), "the work saw the stop");
        assertEquals(1, done.get());
        assertTrue(w.stop(Duration.ofSeconds(1)), "a second stop returns at once");
    }
}
