package dev.modelfs.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.testing.Poll;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ChunkCacheTest {
    private static void fillWith(MemorySegment s, byte b) {
        s.fill(b);
    }

    @Test
    void computesOncePerKeyAndServesTheBytes() {
        try (ChunkCache c = new ChunkCache(8 << 20)) {
            AtomicInteger computed = new AtomicInteger();
            for (int i = 0; i < 3; i++) {
                ChunkCache.Chunk ch = c.acquire(new ChunkCache.Key(1, 2), 1000, s -> { computed.incrementAndGet(); fillWith(s, (byte) 7); });
                assertEquals(1000, ch.bytes().byteSize());
                assertEquals(7, ch.bytes().get(ValueLayout.JAVA_BYTE, 999));
                assertTrue(ch.bytes().isNative(), "chunks live off the heap");
                assertTrue(ch.is(1, 2));
                assertFalse(ch.is(1, 3));
                ch.release();
            }
            assertEquals(1, computed.get());
            assertTrue(c.contains(new ChunkCache.Key(1, 2)));
        }
    }

    @Test
    void statsCountLookupsEvictionsAndTheBytesHeldButNotReadAheadProbes() {
        long mib = ChunkCache.BUFFER_BYTES;
        try (ChunkCache c = new ChunkCache(4 * mib)) {                        // room for four chunks
            c.acquire(new ChunkCache.Key(5, 0), mib, s -> fillWith(s, (byte) 1)).release();
            c.acquire(new ChunkCache.Key(5, 0), mib, s -> fillWith(s, (byte) 1)).release();
            assertTrue(c.contains(new ChunkCache.Key(5, 0)));                  // a probe, not a lookup
            assertFalse(c.contains(new ChunkCache.Key(5, 99)));
            assertEquals(new ChunkCache.Stats(1, 1, 0, mib, 4 * mib), c.stats());
            int inserted = 1;
            for (int k = 1; k <= 10; k++, inserted++) {
                c.acquire(new ChunkCache.Key(6, k), mib, s -> fillWith(s, (byte) 2)).release();
            }
            int cached = c.contains(new ChunkCache.Key(5, 0)) ? 1 : 0;
            for (int k = 1; k <= 10; k++) {
                cached += c.contains(new ChunkCache.Key(6, k)) ? 1 : 0;
            }
            ChunkCache.Stats s = c.stats();
            assertEquals(1, s.hits());
            assertEquals(11, s.misses());
            assertTrue(cached <= 4, cached + " chunks cached in room for 4");
            assertEquals(inserted - cached, s.evictions(), "every chunk not cached any more was evicted");
            assertEquals(cached * mib, s.bytes(), "bytes = the buffers of the chunks cached");
        }
    }

    @Test
    void tinyChunksAreWeighedByTheBufferTheyHoldSoTheBoundIsNativeMemory() {
        // 20,000 tensors of a few bytes each once held 20 GiB of 1 MiB buffers under a 512 MiB bound;
        // a chunk of 8 bytes now holds a 4 KiB buffer, and is weighed as such.
        try (ChunkCache c = new ChunkCache(4 * 4096)) {
            int n = 64;
            for (int i = 0; i < n; i++) {
                c.acquire(new ChunkCache.Key(9, i), 8, s -> fillWith(s, (byte) 1)).release();
            }
            int cached = 0;
            for (int i = 0; i < n; i++) {
                cached += c.contains(new ChunkCache.Key(9, i)) ? 1 : 0;
            }
            assertTrue(cached >= 1 && cached <= 4, cached + " tiny chunks cached; 4 buffers fit the bound");
        }
    }

    @Test
    void aHeldChunkKeepsItsBytesAfterEvictionAndItsBufferIsRecycledOnlyAfterRelease() {
        try (ChunkCache c = new ChunkCache(ChunkCache.BUFFER_BYTES)) {          // room for one chunk
            ChunkCache.Chunk a = c.acquire(new ChunkCache.Key(1, 0), ChunkCache.BUFFER_BYTES, s -> fillWith(s, (byte) 1));
            for (int k = 1; k < 20; k++) {                                      // evicts chunk 0 (held)
                byte v = (byte) (k + 1);
                c.acquire(new ChunkCache.Key(1, k), ChunkCache.BUFFER_BYTES, s -> fillWith(s, v)).release();
            }
            assertFalse(c.contains(new ChunkCache.Key(1, 0)), "evicted");
            assertEquals(1, a.bytes().get(ValueLayout.JAVA_BYTE, 0), "a held chunk's buffer is not reused");
            assertEquals(1, a.bytes().get(ValueLayout.JAVA_BYTE, ChunkCache.BUFFER_BYTES - 1));
            long addr = a.bytes().address();
            a.release();
            assertFalse(a.tryAcquire(), "recycled chunks cannot be held again");
            ChunkCache.Chunk b = c.acquire(new ChunkCache.Key(2, 0), ChunkCache.BUFFER_BYTES, s -> fillWith(s, (byte) 9));
            assertEquals(9, b.bytes().get(ValueLayout.JAVA_BYTE, 0));
            assertNotEquals(0, addr);
            b.release();
        }
    }

    @Test
    void aFailedFillCachesNothing() {
        try (ChunkCache c = new ChunkCache(8 << 20)) {
            ChunkCache.Key k = new ChunkCache.Key(3, 0);
            assertThrows(IllegalStateException.class, () -> c.acquire(k, 10, s -> { throw new IllegalStateException("boom"); }));
            assertFalse(c.contains(k));
            ChunkCache.Chunk ok = c.acquire(k, 10, s -> fillWith(s, (byte) 4));
            assertEquals(4, ok.bytes().get(ValueLayout.JAVA_BYTE, 9));
            ok.release();
        }
    }

    @Test
    void aZeroSizedCacheStillServesHeldChunks() {
        try (ChunkCache c = new ChunkCache(0)) {
            ChunkCache.Chunk ch = c.acquire(new ChunkCache.Key(1, 0), 64, s -> fillWith(s, (byte) 5));
            assertEquals(5, ch.bytes().get(ValueLayout.JAVA_BYTE, 63));
            ch.release();
            ChunkCache.Chunk again = c.acquire(new ChunkCache.Key(1, 0), 64, s -> fillWith(s, (byte) 6));
            assertEquals(6, again.bytes().get(ValueLayout.JAVA_BYTE, 0), "recomputed: a zero-sized cache keeps nothing");
            again.release();
        }
    }

    @Test
    void readersOfTheSameChunksAtOnceConvertEachChunkOnce() throws Exception {
        int readers = 8;
        int chunks = 16;
        AtomicInteger[] fills = new AtomicInteger[chunks];
        for (int i = 0; i < chunks; i++) {
            fills[i] = new AtomicInteger();
        }
        ExecutorService pool = Executors.newFixedThreadPool(readers);
        try (ChunkCache c = new ChunkCache(64L << 20)) {
            CountDownLatch start = new CountDownLatch(1);
            Set<Thread> readerThreads = ConcurrentHashMap.newKeySet();
            AtomicInteger overlapped = new AtomicInteger();
            List<Future<Long>> sums = new ArrayList<>();
            for (int r = 0; r < readers; r++) {
                sums.add(pool.submit(() -> {
                    readerThreads.add(Thread.currentThread());
                    start.await();
                    long sum = 0;
                    for (int k = 0; k < chunks; k++) {
                        int chunk = k;
                        ChunkCache.Chunk ch = c.acquire(new ChunkCache.Key(5, chunk), 4096, s -> {
                            fills[chunk].incrementAndGet();
                            try {                            // a slow conversion: it ends once every other reader waits for it
                                if (Poll.within(Duration.ofSeconds(10), () -> othersWaitForThisChunk(readerThreads))) {
                                    overlapped.incrementAndGet();
                                }
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                            fillWith(s, (byte) (chunk + 1));
                        });
                        sum += ch.bytes().get(ValueLayout.JAVA_BYTE, 4095);
                        ch.release();
                    }
                    return sum;
                }));
            }
            Poll.until("every reader started", Duration.ofSeconds(30), () -> readerThreads.size() == readers);
            start.countDown();
            for (Future<Long> f : sums) {
                assertEquals((long) chunks * (chunks + 1) / 2, f.get(30, TimeUnit.SECONDS), "every reader saw every chunk's bytes");
            }
            for (int i = 0; i < chunks; i++) {
                assertEquals(1, fills[i].get(), "chunk " + i + " converted once for " + readers + " readers");
            }
            assertEquals(chunks, c.conversions());
            assertEquals(chunks, overlapped.get(), "each conversion ran while the " + (readers - 1) + " other readers waited for it");
        } finally {
            pool.shutdownNow();
        }
    }

    /** Whether every reader but the calling one is parked in the cache, waiting for another's conversion. */
    private static boolean othersWaitForThisChunk(Set<Thread> readers) {
        return readers.stream().filter(t -> t != Thread.currentThread()).allMatch(t -> Poll.parkedIn(t, "awaitOther"));
    }

    /**
     * A sequential reader of a file 8 times the cache, with read-ahead 3 chunks in front of it (the read path's
     * pattern): every chunk is converted once, by read-ahead, and found by the reader. A frequency-based admission
     * policy (Caffeine's W-TinyLFU, which this cache used before) rejects the read-ahead chunks once the cache is full
     * (they have been used once, the chunks they would replace twice) and converted most chunks twice.
     */
    @Test
    void readAheadChunksStayUntilTheReaderComesEvenWhenTheFileIsLargerThanTheCache() {
        long mib = ChunkCache.BUFFER_BYTES;
        int cacheChunks = 16;
        int fileChunks = 8 * cacheChunks;
        int ahead = 3;
        try (ChunkCache c = new ChunkCache(cacheChunks * mib)) {
            int readerFound = 0;
            for (int k = 0; k < fileChunks; k++) {
                for (int a = k + 1; a <= Math.min(fileChunks - 1, k + ahead); a++) {
                    if (!c.contains(new ChunkCache.Key(9, a))) {
                        int chunk = a;
                        c.acquire(new ChunkCache.Key(9, a), mib, s -> fillWith(s, (byte) chunk)).release();
                    }
                }
                boolean cached = c.contains(new ChunkCache.Key(9, k));
                readerFound += cached ? 1 : 0;
                int chunk = k;
                ChunkCache.Chunk ch = c.acquire(new ChunkCache.Key(9, k), mib, s -> fillWith(s, (byte) chunk));
                assertEquals((byte) k, ch.bytes().get(ValueLayout.JAVA_BYTE, mib - 1));
                ch.release();
            }
            assertEquals(fileChunks, c.conversions(), "each chunk converted once");
            assertEquals(fileChunks - 1, readerFound, "the reader found every chunk but the first ready");
            assertTrue(c.stats().bytes() <= cacheChunks * mib);
        }
    }


    @Test
    void prefaultIsBoundedByTheCacheAndItsBuffersServeLaterChunks() {
        long mib = 1 << 20;
        ChunkCache cache = new ChunkCache(8 * mib);
        try {
            assertEquals(8 * mib, cache.prefault(100 * mib), "never more than the cache's size");
            assertEquals(0, cache.prefault(100 * mib), "the buffers are all handed out");
            for (long k = 0; k < 12; k++) {                    // more chunks than fit: eviction recycles buffers
                long key = k;
                ChunkCache.Chunk c = cache.acquire(new ChunkCache.Key(1, k), mib, b -> b.fill((byte) key));
                try {
                    assertEquals((byte) k, c.bytes().get(java.lang.foreign.ValueLayout.JAVA_BYTE, mib - 1));
                } finally {
                    c.release();
                }
            }
            assertTrue(cache.stats().bytes() <= 8 * mib);
        } finally {
            cache.close();
        }
        assertEquals(0, cache.prefault(mib), "a closed cache faults nothing in");
        try (ChunkCache small = new ChunkCache(8 * mib)) {
            assertEquals(0, small.prefault(mib - 1), "less than a buffer: nothing");
        }
    }
}
