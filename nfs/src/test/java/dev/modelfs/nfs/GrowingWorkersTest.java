package dev.modelfs.nfs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class GrowingWorkersTest {
    @Test
    void callsThatWaitDoNotHoldBackOthersUntilTheBoundThenQueue() throws Exception {
        ExecutorService pool = GrowingWorkers.create("test", 2, 6);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        Runnable stuck = () -> {
            running.incrementAndGet();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            done.incrementAndGet();
        };
        try {
            for (int i = 0; i < 5; i++) {
                pool.execute(stuck);
            }
            awaitValue(running, 5);                 // five waiting calls, five threads: the pool grew past its core
            for (int i = 0; i < 3; i++) {
                pool.execute(stuck);
            }
            awaitValue(running, 6);                 // the bound: the last two wait in the queue
            assertEquals(6, running.get());
            release.countDown();
            awaitValue(done, 8);                    // queued calls run once threads come free
        } finally {
            release.countDown();
            pool.shutdownNow();
        }
    }

    private static void awaitValue(AtomicInteger v, int want) throws InterruptedException {
        dev.modelfs.testing.Poll.until("reached " + want, java.time.Duration.ofSeconds(20), () -> v.get() >= want, () -> "at " + v.get());
    }
}
