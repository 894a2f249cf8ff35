package dev.modelfs.nfs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.Segment;
import dev.modelfs.cache.BlobMappings;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.read.ReadAhead;
import dev.modelfs.serve.ServePolicy;
import dev.modelfs.store.Digest;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.tree.FileNode;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reference counts of NFS's opened files under concurrency: READs of six files through a cache of two
 * evict and reopen all the time; a retained source must never be closed under its READ (it would refuse
 * the read), every READ gets the right bytes, and once the cache is closed every blob is unmapped.
 */
class OpenFilesStressTest {
    @TempDir
    Path store;

    @Test
    void retainedSourcesOutliveTheirEvictionAndAllCloseInTheEnd() throws Exception {
        Files.createDirectories(store.resolve("blobs"));
        List<FileNode> nodes = new ArrayList<>();
        List<byte[]> contents = new ArrayList<>();
        for (int f = 0; f < 6; f++) {
            byte[] b = new byte[8192];
            new Random(f).nextBytes(b);
            Digest d = new Digest(String.format("%064x", f + 1));
            Files.write(store.resolve("blobs").resolve(d.fileName()), b);
            BlobRef ref = new BlobRef(d, b.length);
            nodes.add(new FileNode(f + 10, 0, ByteSource.of(new Segment.Converted(new OpenFilesTest.Xor(ref))), Map.of()));
            contents.add(b);
        }
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        BlobMappings mappings = new BlobMappings(0);
        try (ChunkCache chunks = new ChunkCache(1 << 16)) {
            BlobResolver resolver = BlobResolver.forStore(new OllamaStore(store), mappings);
            OpenFiles open = new OpenFiles(new ServePolicy(store, resolver, chunks, ReadAhead.NONE, 0, 0), 2);
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int seed = t;
                Thread th = new Thread(() -> {
                    Random rnd = new Random(seed);
                    MemorySegment dst = MemorySegment.ofArray(new byte[64]);
                    try {
                        start.await();
                        for (int r = 0; r < 3_000 && errors.isEmpty(); r++) {
                            int f = rnd.nextInt(nodes.size());
                            int at = rnd.nextInt(8192 - 64);
                            try (OpenFiles.Opened o = open.open(nodes.get(f))) {
                                o.source().read(at, dst, 0, 64);
                            }
                            for (int i = 0; i < 64; i += 7) {
                                if (dst.get(ValueLayout.JAVA_BYTE, i) != (byte) (contents.get(f)[at + i] ^ 0x5a)) {
                                    errors.add("file " + f + " byte " + (at + i) + " wrong");
                                }
                            }
                        }
                    } catch (Exception | Error e) {
                        errors.add(e.toString());
                    }
                });
                threads.add(th);
                th.start();
            }
            start.countDown();
            for (Thread th : threads) {
                th.join(TimeUnit.SECONDS.toMillis(60));
                assertTrue(!th.isAlive());
            }
            open.close();
        }
        assertTrue(errors.isEmpty(), errors.size() + " errors, first: " + errors.peek());
        assertEquals(0, mappings.mappedCount(), "every source closed, every lease released");
        mappings.close();
    }
}
