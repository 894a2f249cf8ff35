package dev.modelfs.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.bytes.Segment;
import dev.modelfs.cache.BlobMappings;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.store.Digest;
import dev.modelfs.testing.Poll;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Read-ahead on its own: its window, a requested chunk converted into the cache once, nothing for a closed file. */
class ReadAheadTest {
    @TempDir
    Path dir;

    /** Byte i is blob byte i plus one: the oracle is computed here, not by the code under test. */
    static final class PlusOne extends ConvertedData {
        final BlobRef src;
        final AtomicInteger computes = new AtomicInteger();

        PlusOne(BlobRef src) {
            this.src = src;
        }

        @Override public long length() { return src.expectedSize(); }
        @Override public long chunkBytes() { return 10; }
        @Override public List<BlobRef> blobs() { return List.of(src); }
        @Override public String describe() { return "plus one"; }

        @Override
        public void compute(long c, List<MemorySegment> blobs, MemorySegment out) {
            computes.incrementAndGet();
            for (long i = 0; i < out.byteSize(); i++) {
                out.set(ValueLayout.JAVA_BYTE, i, (byte) (blobs.getFirst().get(ValueLayout.JAVA_BYTE, c * 10 + i) + 1));
            }
        }
    }

    @Test
    void theWindowIsZeroWithoutThreads() {
        assertEquals(0, ReadAhead.NONE.windowBytes());
        try (ReadAhead none = new ReadAhead(0, 1000); ReadAhead two = new ReadAhead(2, 1000); ReadAhead cores = ReadAhead.forCores()) {
            assertEquals(0, none.windowBytes());
            assertEquals(1000, two.windowBytes());
            assertEquals(2L * Runtime.getRuntime().availableProcessors() * ConvertedData.CHUNK_TARGET, cores.windowBytes());
        }
    }

    @Test
    void aRequestedChunkIsConvertedIntoTheCacheOnceAndAClosedFileGetsNone() throws IOException, InterruptedException {
        byte[] b = new byte[40];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (3 * i);
        }
        Digest d = new Digest("9".repeat(64));
        Path p = Files.write(dir.resolve(d.fileName()), b);
        PlusOne data = new PlusOne(new BlobRef(d, b.length));
        try (BlobMappings mappings = new BlobMappings(2); ChunkCache cache = new ChunkCache(1 << 16);
                ReadAhead ahead = new ReadAhead(1, 100)) {
            OpenedSource file = OpenedSource.open(ByteSource.of(new Segment.Converted(data)),
                    ref -> mappings.acquire(ref.digest().hex(), p, ref.expectedSize()), cache, ReadAhead.NONE);
            ChunkCache.Key key = new ChunkCache.Key(data.id(), 2);
            ahead.request(file, data, 2, cache);
            Poll.until("chunk 2 converted ahead", Duration.ofSeconds(30), () -> cache.contains(key));
            ahead.request(file, data, 2, cache);
            assertEquals(1, data.computes.get(), "a cached chunk is not converted again");
            byte[] got = new byte[10];
            file.read(20, MemorySegment.ofArray(got), 0, 10);
            for (int i = 0; i < 10; i++) {
                assertEquals((byte) (b[20 + i] + 1), got[i]);
            }
            assertEquals(1, data.computes.get(), "the reader found the chunk in the cache");
            file.close();
            ahead.request(file, data, 3, cache);
            // the control: a request made after it on the same one-thread queue (tasks run in order) for an open
            // file's chunk 3 is converted; once it is, the closed file's request has run too
            PlusOne other = new PlusOne(new BlobRef(d, b.length));
            OpenedSource open = OpenedSource.open(ByteSource.of(new Segment.Converted(other)),
                    ref -> mappings.acquire(ref.digest().hex(), p, ref.expectedSize()), cache, ReadAhead.NONE);
            ahead.request(open, other, 3, cache);
            Poll.until("the open file's chunk 3 converted ahead", Duration.ofSeconds(30), () -> cache.contains(new ChunkCache.Key(other.id(), 3)));
            assertEquals(1, other.computes.get());
            assertFalse(cache.contains(new ChunkCache.Key(data.id(), 3)), "a closed file cannot be pinned");
            assertEquals(1, data.computes.get());
            open.close();
        }
    }
}
