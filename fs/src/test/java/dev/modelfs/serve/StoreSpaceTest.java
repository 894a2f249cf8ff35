package dev.modelfs.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link StoreSpace}: a stalled disk costs a request the bound at most, and holds one thread, never more. */
class StoreSpaceTest {
    private static final ServePolicy.Space FIRST = new ServePolicy.Space(4096, 100, 50, 40);
    private static final ServePolicy.Space SECOND = new ServePolicy.Space(4096, 100, 10, 5);

    @Test
    void aStalledDiskAnswersTheLastSpaceWithinTheBoundAndIsAskedOnce() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger asked = new AtomicInteger();
        StoreSpace s = new StoreSpace(() -> {
            if (asked.incrementAndGet() == 1) {
                return FIRST;
            }
            try {
                assertTrue(release.await(30, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
            return SECOND;
        }, Duration.ofMillis(200));
        assertEquals(FIRST, s.space());
        for (int i = 0; i < 3; i++) {                           // the disk stalls: each request the bound at most
            long t0 = System.nanoTime();
            assertEquals(FIRST, s.space());
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "answered within the bound");
        }
        assertEquals(2, asked.get(), "one question in flight while the disk stalls");
        release.countDown();
        dev.modelfs.testing.Poll.until("the fresh space", Duration.ofSeconds(10), () -> s.space().equals(SECOND), () -> "");
    }

    @Test
    void anErrorOfTheDiskIsTheRequestsError() {
        StoreSpace s = new StoreSpace(() -> {
            throw new IOException("Input/output error");
        }, Duration.ofMillis(200));
        assertEquals("Input/output error", assertThrows(IOException.class, s::space).getMessage());
    }
}
