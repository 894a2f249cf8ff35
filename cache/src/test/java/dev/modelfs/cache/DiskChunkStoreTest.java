package dev.modelfs.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.testing.Poll;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class DiskChunkStoreTest {
    private static final int LEN = 100_000;

    @TempDir
    Path dir;

    /** The bytes of chunk {@code chunk}: a pseudo-random pattern, independent of the cache. */
    private static byte[] expected(long chunk) {
        byte[] b = new byte[LEN];
        new Random(chunk * 7919 + 1).nextBytes(b);
        return b;
    }

    private static Consumer<MemorySegment> fillOf(long chunk, AtomicInteger counter) {
        return s -> {
            counter.incrementAndGet();
            MemorySegment.copy(MemorySegment.ofArray(expected(chunk)), 0, s, 0, LEN);
        };
    }

    private static String name(long chunk) {
        return "ab12cd-" + chunk;
    }

    private static byte[] read(ChunkCache c, long sourceId, long chunk, AtomicInteger counter) {
        ChunkCache.Chunk ch = c.acquire(new ChunkCache.Key(sourceId, chunk), name(chunk), LEN, fillOf(chunk, counter));
        try {
            return ch.bytes().toArray(ValueLayout.JAVA_BYTE);
        } finally {
            ch.release();
        }
    }

    /**
     * The LRU order (DESIGN.md §2.7 "Complete files"): a read is a use, a copy for assembling a complete file is not,
     * and a demoted chunk (its file assembled) is the first the bound trims.
     */
    @Test
    void aReadIsAUseACopyIsNotAndADemotedChunkIsTrimmedFirst() throws IOException {
        try (DiskChunkStore disk = new DiskChunkStore(dir, 5L << 20, 16); Arena a = Arena.ofConfined()) {
            MemorySegment mib = a.allocate(1 << 20);
            for (String n : List.of("aa-0", "bb-0", "cc-0", "dd-0")) {
                assertTrue(disk.write(n, mib));
            }
            java.nio.file.attribute.FileTime old = java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() - 3_600_000);
            for (String n : List.of("aa-0", "bb-0", "cc-0", "dd-0")) {
                Files.setLastModifiedTime(disk.fileOf(n), old);
            }
            assertTrue(disk.copy("aa-0", mib));
            assertEquals(old, Files.getLastModifiedTime(disk.fileOf("aa-0")), "a copy is not a use");
            assertTrue(disk.read("bb-0", mib));
            assertTrue(Files.getLastModifiedTime(disk.fileOf("bb-0")).compareTo(old) > 0, "a read is");
            disk.demote("cc-0");
            assertTrue(Files.getLastModifiedTime(disk.fileOf("cc-0")).compareTo(old) < 0, "demoted: older than any use");
            assertTrue(disk.write("ee-0", mib));
            assertTrue(disk.write("ff-0", mib));                 // 6 MiB and trailers > 5 MiB: trimmed to 4.5 MiB
            assertFalse(disk.contains("cc-0"), "the demoted chunk goes first");
            assertFalse(disk.contains("aa-0") && disk.contains("dd-0"), "then the least recently used");
            assertTrue(disk.contains("bb-0") && disk.contains("ee-0") && disk.contains("ff-0"));
        }
    }

    @Test
    void chunksConvertedBeforeARestartAreReadFromDiskAfterIt() throws IOException {
        AtomicInteger first = new AtomicInteger();
        DiskChunkStore disk = new DiskChunkStore(dir, 64 << 20);
        try (ChunkCache c = new ChunkCache(64 << 20, disk)) {
            for (long k = 0; k < 4; k++) {
                assertArrayEquals(expected(k), read(c, 1, k, first));
            }
            assertTrue(disk.flush(10_000));
            assertEquals(4, disk.writes());
        }
        assertEquals(4, first.get());
        AtomicInteger second = new AtomicInteger();
        DiskChunkStore again = new DiskChunkStore(dir, 64 << 20);       // a new process: new source ids, same names
        try (ChunkCache c = new ChunkCache(64 << 20, again)) {
            for (long k = 0; k < 4; k++) {
                assertArrayEquals(expected(k), read(c, 77, k, second));
            }
            assertEquals(0, second.get(), "nothing converted after the restart");
            assertEquals(0, c.conversions());
            assertEquals(4, again.hits());
        }
    }

    @Test
    @Timeout(60)                                                           // a blocked reader would hang here
    void aFullWriteQueueNeverBlocksTheReaderAndTheBacklogIsWrittenFromMemoryOnceIdle() throws IOException {
        int queue = 8;
        DiskChunkStore disk = new DiskChunkStore(dir, 10_000_000, queue);
        disk.write("old-filler", Arena.ofAuto().allocate(9_950_000));   // the first chunk's write then trims,
        AtomicInteger converted = new AtomicInteger();
        try (ChunkCache c = new ChunkCache(64 << 20, disk)) {
            synchronized (disk) {                                          // and stalls in trim, under the store's lock
                for (long k = 0; k < 40; k++) {
                    assertArrayEquals(expected(k), read(c, 1, k, converted));
                }
                assertEquals(40, converted.get(), "the reader was not blocked");
            }
            assertTrue(disk.flush(10_000));
            assertEquals(40, converted.get(), "the backlog's chunks were still in memory: none converted again");
            assertEquals(1 + 40, disk.writes());
            assertEquals(40 - 1 - queue, disk.backfilled());
            assertEquals(0, disk.skipped());
            assertFalse(Files.exists(disk.fileOf("old-filler")), "the trim removed the filler, the oldest file, only");
            for (long k = 0; k < 40; k++) {
                MemorySegment m = Arena.ofAuto().allocate(LEN);
                assertTrue(disk.read(name(k), m), "chunk " + k + " on disk");
                assertArrayEquals(expected(k), m.toArray(ValueLayout.JAVA_BYTE));
            }
        }
    }

    @Test
    @Timeout(60)                                                           // a blocked reader would hang here
    void aStalledWriterSkipsNothingWithinTheBacklogAndConvertsAgainWhatLeftMemory() throws IOException {
        int queue = 8;
        DiskChunkStore disk = new DiskChunkStore(dir, 1, queue);        // every write then trims, under the store's lock
        AtomicInteger converted = new AtomicInteger();
        try (ChunkCache c = new ChunkCache(2 << 20, disk)) {             // two 1 MiB buffers: most chunks leave memory
            synchronized (disk) {                                          // the writer stalls in its first trim
                for (long k = 0; k < 40; k++) {
                    assertArrayEquals(expected(k), read(c, 1, k, converted));
                }
                assertEquals(40, converted.get());
            }
            assertTrue(disk.flush(10_000));
            assertEquals(40, disk.writes(), "each chunk written once: the queued ones, then the backlog's");
            assertEquals(40 - 1 - queue, disk.backfilled());
            assertEquals(0, disk.skipped());
            assertTrue(converted.get() > 40 && converted.get() <= 40 + 40 - 1 - queue,
                    "the backlog's chunks no longer cached were converted again: " + converted.get());
            assertEquals(converted.get(), c.conversions());
        }
    }

    @Test
    @Timeout(60)                                                           // a blocked reader would hang here
    void aBacklogChunkThatCannotBeMadeAgainIsSkippedAndCounted() throws IOException {
        int queue = 8;
        DiskChunkStore disk = new DiskChunkStore(dir, 1, queue);
        AtomicInteger calls = new AtomicInteger();
        try (ChunkCache c = new ChunkCache(1 << 20, disk)) {             // one buffer: the backlog must convert again
            synchronized (disk) {
                for (long k = 0; k < 20; k++) {
                    long chunk = k;
                    ChunkCache.Chunk ch = c.acquire(new ChunkCache.Key(1, k), name(k), LEN, s -> {
                        if (calls.incrementAndGet() > 20) {
                            throw new IllegalStateException("source closed");   // as a closed file's conversion fails
                        }
                        MemorySegment.copy(MemorySegment.ofArray(expected(chunk)), 0, s, 0, LEN);
                    });
                    ch.release();
                }
            }
            assertTrue(disk.flush(10_000));
            assertEquals(1 + queue + 1, disk.writes(), "the queued ones, and the last chunk from memory");
            assertEquals(1, disk.backfilled());
            assertEquals(20 - 1 - queue - 1, disk.skipped(), "the others could not be converted again");
        }
    }

    @Test
    @Timeout(60)
    void closeWritesTheBacklogBeforeItReturnsSoARestartFindsEveryChunk() throws Exception {
        int queue = 4;
        DiskChunkStore disk = new DiskChunkStore(dir, 10_000_000, queue);
        disk.write("old-filler", Arena.ofAuto().allocate(9_950_000));   // the first chunk's write then trims
        AtomicInteger converted = new AtomicInteger();
        ChunkCache c = new ChunkCache(1 << 20, disk);                    // one buffer: the backlog converts again
        Thread closer = new Thread(c::close);
        synchronized (disk) {                                              // the writer stalls in its first trim
            for (long k = 0; k < 30; k++) {
                assertArrayEquals(expected(k), read(c, 1, k, converted));
            }
            closer.start();                                                // shut down while the backlog is full
            awaitCloseWaitingForTheWriter(closer);
        }
        closer.join(30_000);
        assertFalse(closer.isAlive());
        assertEquals(0, disk.skipped(), "nothing dropped at close");
        assertEquals(30 - 1 - queue, disk.backfilled(), "the backlog written by close()");
        try (DiskChunkStore again = new DiskChunkStore(dir, 10_000_000)) {  // the next process
            for (long k = 0; k < 30; k++) {
                MemorySegment m = Arena.ofAuto().allocate(LEN);
                assertTrue(again.read(name(k), m), "chunk " + k + " on disk after the restart");
                assertArrayEquals(expected(k), m.toArray(ValueLayout.JAVA_BYTE));
            }
        }
    }

    @Test
    @Timeout(60)
    void everyRetainedFillIsReleasedOnceWhetherWrittenOrDroppedAtClose() throws Exception {
        int queue = 4;
        DiskChunkStore disk = new DiskChunkStore(dir, 1, queue);
        AtomicInteger retained = new AtomicInteger();
        AtomicInteger released = new AtomicInteger();
        ChunkCache c = new ChunkCache(1 << 20, disk);
        Thread closer = new Thread(c::close);
        synchronized (disk) {                                              // the writer stalls in its first trim
            for (long k = 0; k < 40; k++) {
                long chunk = k;
                c.acquire(new ChunkCache.Key(1, k), name(k), LEN, new ChunkCache.RetainableFill() {
                    @Override
                    public void accept(MemorySegment s) {
                        MemorySegment.copy(MemorySegment.ofArray(expected(chunk)), 0, s, 0, LEN);
                    }

                    @Override
                    public boolean retain() {
                        retained.incrementAndGet();
                        return true;
                    }

                    @Override
                    public void release() {
                        released.incrementAndGet();
                    }
                }).release();
            }
            assertEquals(40 - 1 - queue, retained.get(), "each chunk sent to the backlog retained its fill");
            closer.start();                                                // closes while the backlog waits
            awaitCloseWaitingForTheWriter(closer);
        }
        closer.join(30_000);
        assertFalse(closer.isAlive());
        assertEquals(retained.get(), released.get(), "every hold let go, once");
        assertEquals(40, disk.writes() + disk.skipped(), "each chunk written or counted as skipped");
    }

    /**
     * Returns once {@code closer} is inside {@link DiskChunkStore#close()}, waiting for the writer (which this test
     * stalls by holding the store's monitor): the close provably began while the backlog was full.
     */
    private static void awaitCloseWaitingForTheWriter(Thread closer) throws InterruptedException {
        Poll.until("close() waiting for the stalled writer", Duration.ofSeconds(30), () -> Poll.parkedIn(closer, "awaitTermination"));
    }

    @Test
    void theWriteQueueHoldsHalfTheMemoryCachesChunksWithinBounds() {
        assertEquals(256, DiskChunkStore.queueFor(512L << 20));
        assertEquals(16, DiskChunkStore.queueFor(8L << 20));
        assertEquals(16, DiskChunkStore.queueFor(0));
        assertEquals(1024, DiskChunkStore.queueFor(64L << 30));
    }

    @Test
    void aTruncatedOrCorruptFileIsAMissAndIsReplaced() throws IOException {
        DiskChunkStore disk = new DiskChunkStore(dir, 64 << 20);
        disk.write(name(1), MemorySegment.ofArray(expected(1)));
        disk.write(name(2), MemorySegment.ofArray(expected(2)));
        disk.write(name(3), MemorySegment.ofArray(expected(3)));
        Path truncated = disk.fileOf(name(1));
        try (FileChannel ch = FileChannel.open(truncated, StandardOpenOption.WRITE)) {
            ch.truncate(LEN / 2);
        }
        Path flipped = disk.fileOf(name(2));
        byte[] bytes = Files.readAllBytes(flipped);
        bytes[LEN / 3] ^= 1;
        Files.write(flipped, bytes);
        Path shortTrailer = disk.fileOf(name(3));
        try (FileChannel ch = FileChannel.open(shortTrailer, StandardOpenOption.WRITE)) {
            ch.truncate(LEN + 10);                                       // the payload is whole, the trailer is not
        }
        AtomicInteger fills = new AtomicInteger();
        try (ChunkCache c = new ChunkCache(64 << 20, disk)) {
            for (long k = 1; k <= 3; k++) {
                assertArrayEquals(expected(k), read(c, 1, k, fills));
            }
            assertEquals(3, fills.get(), "each invalid file was converted again");
            assertEquals(3, disk.rejected());
            assertTrue(disk.flush(10_000));
            for (long k = 1; k <= 3; k++) {
                MemorySegment m = Arena.ofAuto().allocate(LEN);
                assertTrue(disk.read(name(k), m), "rewritten whole");
                assertArrayEquals(expected(k), m.toArray(ValueLayout.JAVA_BYTE));
            }
        }
    }

    @Test
    void aFileOfAnotherLengthIsNotServed() throws IOException {
        DiskChunkStore disk = new DiskChunkStore(dir, 64 << 20);
        disk.write(name(4), MemorySegment.ofArray(expected(4)));
        assertFalse(disk.read(name(4), Arena.ofAuto().allocate(LEN - 1)));
        disk.close();
    }

    @Test
    void twoProcessesSharingTheDirectoryReadTheSameChunksAtOnce() throws Exception {
        int readers = 6;
        int chunks = 12;
        DiskChunkStore d1 = new DiskChunkStore(dir, 64 << 20);
        DiskChunkStore d2 = new DiskChunkStore(dir, 64 << 20);
        AtomicInteger fills = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(readers);
        try (ChunkCache c1 = new ChunkCache(1 << 20, d1); ChunkCache c2 = new ChunkCache(1 << 20, d2)) {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int r = 0; r < readers; r++) {
                ChunkCache c = r % 2 == 0 ? c1 : c2;         // small memory caches: chunks are evicted and come back from disk
                int offset = r;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int round = 0; round < 3; round++) {
                        for (int i = 0; i < chunks; i++) {
                            long k = (i + offset) % chunks;
                            assertArrayEquals(expected(k), read(c, c == c1 ? 1 : 2, k, fills));
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            assertTrue(d1.flush(10_000) && d2.flush(10_000));
            assertTrue(fills.get() >= chunks, "every chunk converted at least once");
            assertTrue(fills.get() < (long) readers * chunks * 3, "the disk served some reads: " + fills.get() + " conversions");
        } finally {
            pool.shutdownNow();
        }
        DiskChunkStore d3 = new DiskChunkStore(dir, 64 << 20);
        for (long k = 0; k < chunks; k++) {
            MemorySegment m = Arena.ofAuto().allocate(LEN);
            assertTrue(d3.read(name(k), m), "chunk " + k + " is on disk, whole");
            assertArrayEquals(expected(k), m.toArray(ValueLayout.JAVA_BYTE));
        }
        try (Stream<Path> tmp = Files.list(dir.resolve("tmp"))) {
            assertEquals(0, tmp.count(), "no temporary file left behind");
        }
        d3.close();
    }

    @Test
    void theDirectoryStaysNearItsBound() throws IOException {
        long bound = 10L * LEN;
        DiskChunkStore disk = new DiskChunkStore(dir, bound);
        for (long k = 0; k < 40; k++) {
            disk.write(name(k), MemorySegment.ofArray(expected(k)));
        }
        long total;
        try (Stream<Path> s = Files.walk(dir.resolve("chunks"))) {
            total = s.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
        assertTrue(total <= bound, total + " bytes on disk, bound " + bound);
        assertTrue(total >= bound / 2, "trimming keeps most of the bound: " + total);
        disk.close();
    }

    @Test
    void namesThatAreNotTokensAreRefused() throws IOException {
        DiskChunkStore disk = new DiskChunkStore(dir, 1 << 20);
        assertThrows(IllegalArgumentException.class, () -> disk.fileOf("../../etc/passwd"));
        assertThrows(IllegalArgumentException.class, () -> disk.fileOf("ab/cd"));
        disk.close();
    }
}
