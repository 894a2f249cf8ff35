package dev.modelfs.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The chunk reference counts under concurrency: readers acquire, re-acquire ({@code tryAcquire}) and release
 * chunks of a cache small enough to evict all the time, and check every byte of each chunk while they hold
 * it. A buffer recycled under a holder (a lost or extra reference) is refilled with another key's pattern,
 * which the check reports.
 */
class ChunkCacheStressTest {
    private static final int THREADS = 4;
    private static final int ROUNDS = 3_000;
    private static final int KEYS = 24;
    private static final int LENGTH = 16 << 10;            // the 64 KiB buffer class: 4 fit the cache

    private static long pattern(long chunk, long i) {
        return chunk * 1_000_003L + i;
    }

    @Test
    void heldChunksKeepTheirBytesWhileEvictionRecyclesBuffers() throws Exception {
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        AtomicLong fills = new AtomicLong();
        try (ChunkCache cache = new ChunkCache(4L * (64 << 10))) {
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                Thread th = new Thread(() -> {
                    try {
                        start.await();
                        ThreadLocalRandom rnd = ThreadLocalRandom.current();
                        for (int r = 0; r < ROUNDS && errors.isEmpty(); r++) {
                            long k = rnd.nextInt(KEYS);
                            ChunkCache.Chunk c = cache.acquire(new ChunkCache.Key(9, k), LENGTH, s -> {
                                fills.incrementAndGet();
                                fill(s, k);
                            });
                            boolean twice = rnd.nextBoolean() && c.tryAcquire();
                            if (!c.is(9, k)) {
                                errors.add("chunk " + k + " acquired as another key");
                            }
                            check(c.bytes(), k, errors);
                            Thread.onSpinWait();
                            check(c.bytes(), k, errors);
                            c.release();
                            if (twice) {
                                check(c.bytes(), k, errors);
                                c.release();
                            }
                        }
                    } catch (InterruptedException | RuntimeException e) {
                        errors.add(e.toString());
                    }
                }, "stress-" + t);
                threads.add(th);
                th.start();
            }
            start.countDown();
            for (Thread th : threads) {
                th.join(TimeUnit.SECONDS.toMillis(60));
                assertTrue(!th.isAlive(), th.getName() + " finished");
            }
        }
        assertTrue(errors.isEmpty(), errors.size() + " errors, first: " + errors.peek());
        assertTrue(fills.get() > KEYS, "the cache evicted and refilled (" + fills.get() + " fills): the check saw recycling");
    }

    /** The check can fail: a reference released once too often lets the pool hand the buffer to another key under a holder. */
    @Test
    void theCheckSeesALostReference() {
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        try (ChunkCache cache = new ChunkCache(4L * (64 << 10))) {
            ChunkCache.Chunk c = cache.acquire(new ChunkCache.Key(9, 1), LENGTH, s -> fill(s, 1));
            c.release();
            c.release();                                   // the bug: the cache's own reference is gone too
            cache.acquire(new ChunkCache.Key(9, 2), LENGTH, s -> fill(s, 2)).release();
            check(c.bytes(), 1, errors);
        }
        assertTrue(!errors.isEmpty(), "a recycled buffer under a holder is reported");
    }

    private static void fill(MemorySegment s, long k) {
        for (long i = 0; i < LENGTH / 8; i++) {
            s.set(ValueLayout.JAVA_LONG, 8 * i, pattern(k, i));
        }
    }

    private static void check(MemorySegment bytes, long k, ConcurrentLinkedQueue<String> errors) {
        assertEquals(LENGTH, bytes.byteSize());
        for (long i = 0; i < LENGTH / 8; i += 61) {
            long got = bytes.get(ValueLayout.JAVA_LONG, 8 * i);
            if (got != pattern(k, i)) {
                errors.add("chunk " + k + " word " + i + " holds " + got + " while held");
                return;
            }
        }
    }
}
