package dev.modelfs.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.Segment;
import dev.modelfs.cache.BlobMappings;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.store.Digest;
import dev.modelfs.testing.Poll;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pin count of an open file under concurrency: read-ahead-like tasks pin the file, convert from its
 * mapped blob and unpin, while readers read and the file is closed under them. A task that got its pin
 * must never see its blob unmapped, and once everything let go the blob is unmapped exactly (the mappings
 * keep no idle mapping, so a leaked lease stays counted).
 */
class OpenedSourcePinStressTest {
    @TempDir
    Path dir;

    @RepeatedTest(5)
    void pinnedTasksKeepTheBlobMappedAndTheLastUnpinReleasesIt() throws Exception {
        byte[] content = new byte[64 * 1024];
        new Random(11).nextBytes(content);
        Digest d = new Digest("cd".repeat(32));
        Path file = dir.resolve(d.fileName());
        Files.write(file, content);
        BlobRef ref = new BlobRef(d, content.length);
        BlobMappings mappings = new BlobMappings(0);
        BlobResolver resolver = r -> mappings.acquire(r.digest().hex(), file, r.expectedSize());
        OpenedSourceTest.XorConverted data = new OpenedSourceTest.XorConverted(ref, 1024);
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        AtomicInteger pinned = new AtomicInteger();
        try (ChunkCache chunks = new ChunkCache(1 << 16)) {
            OpenedSource o = OpenedSource.open(ByteSource.of(new Segment.Converted(data)), resolver, chunks);
            assertEquals(1, mappings.mappedCount());
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int seed = t;
                Thread th = new Thread(() -> {
                    Random rnd = new Random(seed);
                    try {
                        start.await();
                        for (int r = 0; r < 2_000; r++) {
                            if (!o.pin()) {
                                return;                                  // closed and fully released: pins are refused
                            }
                            pinned.incrementAndGet();
                            try {
                                long chunk = rnd.nextInt(64);
                                o.convertAhead(data, chunk);
                                ChunkCache.Chunk c = chunks.acquire(new ChunkCache.Key(data.id(), chunk), 1024, s -> {
                                    for (int k = 0; k < 1024; k++) {              // evicted meanwhile: the oracle refills it
                                        s.set(ValueLayout.JAVA_BYTE, k, (byte) (content[(int) chunk * 1024 + k] ^ 0x5a));
                                    }
                                });
                                int i = rnd.nextInt(1024);
                                byte want = (byte) (content[(int) chunk * 1024 + i] ^ 0x5a);
                                if (c.bytes().get(ValueLayout.JAVA_BYTE, i) != want) {
                                    errors.add("chunk " + chunk + " byte " + i + " wrong");
                                }
                                c.release();
                            } finally {
                                o.unpin();
                            }
                        }
                    } catch (InterruptedException | RuntimeException | Error e) {
                        errors.add(e.toString());
                    }
                });
                threads.add(th);
                th.start();
            }
            start.countDown();
            int closeAfter = 1 + new Random().nextInt(2_000);            // close at a random point of the tasks' work
            Poll.until(closeAfter + " pins taken", Duration.ofSeconds(30),
                    () -> pinned.get() >= closeAfter || threads.stream().noneMatch(Thread::isAlive));
            MemorySegment dst = MemorySegment.ofArray(new byte[100]);
            o.read(0, dst, 0, 100);
            o.close();                                                   // while tasks still pin it
            for (Thread th : threads) {
                th.join(TimeUnit.SECONDS.toMillis(60));
                assertTrue(!th.isAlive());
            }
        }
        assertTrue(errors.isEmpty(), errors.size() + " errors, first: " + errors.peek());
        assertTrue(pinned.get() > 0, "tasks ran");
        assertEquals(0, mappings.mappedCount(), "the last unpin released the lease, once");
        mappings.close();
    }
}
