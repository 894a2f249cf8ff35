package dev.modelfs.nfs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.bytes.Segment;
import dev.modelfs.cache.BlobMappings;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.read.ReadAhead;
import dev.modelfs.serve.ServePolicy;
import dev.modelfs.store.Digest;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.testing.Poll;
import dev.modelfs.tree.FileNode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** NFS READs open files through the shared policy: a sequential NFS reader of converted bytes gets read-ahead. */
class OpenFilesTest {
    private static final int CHUNK = 4096;
    private static final int CHUNKS = 16;

    @TempDir
    Path store;

    /** Each output byte is its blob byte xor 0x5a (an oracle anyone can recompute). */
    static final class Xor extends ConvertedData {
        final BlobRef src;

        Xor(BlobRef src) {
            this.src = src;
        }

        @Override public long length() { return src.expectedSize(); }
        @Override public long chunkBytes() { return CHUNK; }
        @Override public List<BlobRef> blobs() { return List.of(src); }
        @Override public String describe() { return "xor"; }

        @Override
        public void compute(long chunk, List<MemorySegment> blobs, MemorySegment out) {
            for (long i = 0; i < out.byteSize(); i++) {
                out.set(ValueLayout.JAVA_BYTE, i, (byte) (blobs.get(0).get(ValueLayout.JAVA_BYTE, chunk * CHUNK + i) ^ 0x5a));
            }
        }
    }

    /** After a failed READ the source is forgotten: the next READ opens the file afresh (SEMANTICS.md "When the store's disk fails"). */
    @Test
    void aSourceWhoseReadFailedIsOpenedAfreshByTheNextRead() throws Exception {
        byte[] content = new byte[CHUNK * 2];
        Digest digest = new Digest("cd".repeat(32));
        Files.createDirectories(store.resolve("blobs"));
        Files.write(store.resolve("blobs").resolve(digest.fileName()), content);
        FileNode node = new FileNode(8, 0, ByteSource.of(new Segment.Converted(new Xor(new BlobRef(digest, content.length)))), Map.of());
        try (BlobMappings mappings = new BlobMappings(4); ChunkCache chunks = new ChunkCache(1 << 20)) {
            ServePolicy policy = new ServePolicy(store, BlobResolver.forStore(new OllamaStore(store), mappings), chunks, ReadAhead.NONE, 0, 0);
            try (OpenFiles open = new OpenFiles(policy, 4)) {
                OpenFiles.Opened first = open.open(node);
                first.close();
                OpenFiles.Opened again = open.open(node);
                again.close();
                org.junit.jupiter.api.Assertions.assertSame(first, again, "a file read without failure stays open");
                open.failed(node, again);
                OpenFiles.Opened fresh = open.open(node);
                fresh.close();
                org.junit.jupiter.api.Assertions.assertNotSame(again, fresh, "opened afresh after a failed READ");
            }
        }
    }

    /** Reads the first bytes of a converted file through {@link OpenFiles}; true when chunk 5 gets converted (by someone else) within {@code bound}. */
    private boolean chunkAheadAppears(ReadAhead readAhead, Duration bound) throws Exception {
        byte[] content = new byte[CHUNK * CHUNKS];
        for (int i = 0; i < content.length; i++) {
            content[i] = (byte) (i * 31 + 7);
        }
        Digest digest = new Digest("ab".repeat(32));
        Files.createDirectories(store.resolve("blobs"));
        Files.write(store.resolve("blobs").resolve(digest.fileName()), content);
        Xor data = new Xor(new BlobRef(digest, content.length));
        FileNode node = new FileNode(7, 0, ByteSource.of(new Segment.Converted(data)), Map.of());
        try (BlobMappings mappings = new BlobMappings(4); ChunkCache chunks = new ChunkCache(1 << 20); readAhead) {
            BlobResolver resolver = BlobResolver.forStore(new OllamaStore(store), mappings);
            ServePolicy policy = new ServePolicy(store, resolver, chunks, readAhead, 0, 0);
            try (OpenFiles open = new OpenFiles(policy, 4); OpenFiles.Opened o = open.open(node);
                 Arena arena = Arena.ofConfined()) {
                MemorySegment dst = arena.allocate(100);
                assertEquals(100, o.source().read(0, dst, 0, 100));
                assertEquals((byte) (content[99] ^ 0x5a), dst.get(ValueLayout.JAVA_BYTE, 99));
                ChunkCache.Key ahead = new ChunkCache.Key(data.id(), 5);
                return Poll.within(bound, () -> chunks.contains(ahead));
            }
        }
    }

    @Test
    void aSequentialNfsReaderOfConvertedBytesGetsTheChunksAheadConverted() throws Exception {
        assertTrue(chunkAheadAppears(new ReadAhead(1, 8L * CHUNK), Duration.ofSeconds(10)), "read-ahead converted chunk 5 before anyone read it");
    }

    /**
     * The control of the test above (its check can fail). Without read-ahead there is no thread that could convert
     * chunk 5 after the read returns, so one look right after it is the whole answer: nothing to wait for.
     */
    @Test
    void withoutReadAheadNoChunkAheadIsConverted() throws Exception {
        assertFalse(chunkAheadAppears(ReadAhead.NONE, Duration.ZERO), "the check above can fail: no pool, no chunk 5");
    }
}
