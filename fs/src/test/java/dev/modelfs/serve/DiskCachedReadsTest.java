package dev.modelfs.serve;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.cache.BlobMappings;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.cache.DiskChunkStore;
import dev.modelfs.read.OpenedSource;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.telemetry.Telemetry;
import dev.modelfs.tree.FileNode;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Converted files read through a served tree with an on-disk chunk cache ({@code --cache-dir}): after a
 * restart (a new tree, new process-local ids) the chunks come from disk, nothing with a persistent name is
 * converted again, and the bytes are those of a tree without the disk cache; a truncated chunk file is
 * converted again; chunks a full write queue turned away are written once the writer is idle, from memory or
 * converted again while their file is open, and lost (never failing) once it is closed.
 */
class DiskCachedReadsTest {
    @TempDir
    Path root;
    @TempDir
    Path cacheDir;

    /** Every converted data of the tree, each instance once (variant folders show some files twice). */
    private static Set<ConvertedData> convertedData(ServedTree served) {
        Set<ConvertedData> all = Collections.newSetFromMap(new IdentityHashMap<>());
        for (FileNode f : TinyGgufStore.files(served.tree())) {
            all.addAll(f.source().convertedData());
        }
        return all;
    }

    /** Chunks of data that has no persistent name (converted on every start, disk or not). */
    private static long unnamedChunks(ServedTree served) {
        long n = 0;
        for (ConvertedData d : convertedData(served)) {
            if (d.persistentName(0) == null) {
                n += (d.length() + d.chunkBytes() - 1) / d.chunkBytes();
            }
        }
        return n;
    }

    /** How many converted data (instances) of the tree have a chunk named {@code name}. */
    private static long readersOf(ServedTree served, String name) {
        long n = 0;
        for (ConvertedData d : convertedData(served)) {
            long chunks = (d.length() + d.chunkBytes() - 1) / d.chunkBytes();
            for (long c = 0; c < chunks; c++) {
                n += name.equals(d.persistentName(c)) ? 1 : 0;
            }
        }
        return n;
    }

    @Test
    void aRestartReadsTheConvertedChunksFromDiskWithTheSameBytes() throws Exception {
        OllamaStore store = TinyGgufStore.create(root);
        Map<Long, String> plain;
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000)) {
            plain = TinyGgufStore.digests(served);
        }
        DiskChunkStore first = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        long converted;
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, first)) {
            assertEquals(plain, TinyGgufStore.digests(served));
            converted = served.chunks().conversions();
            assertTrue(first.flush(10_000));
            assertTrue(first.writes() > 0 && first.writes() == converted - unnamedChunks(served),
                    first.writes() + " chunks written of " + converted + " converted");
        }
        DiskChunkStore second = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, second)) {
            assertEquals(plain, TinyGgufStore.digests(served));
            assertEquals(unnamedChunks(served), served.chunks().conversions(), "only chunks without a persistent name converted again");
            assertEquals(first.writes() + first.hits(), second.hits(), "every named chunk came from disk");
            // whether the first run's later views hit what its earlier ones wrote depends on how fast its writer was;
            // that the tree's views name the same chunks, so that they share one file on disk, does not
            Set<String> names = new java.util.HashSet<>();
            long named = 0;
            for (ConvertedData d : convertedData(served)) {
                for (long c = 0; c < (d.length() + d.chunkBytes() - 1) / d.chunkBytes(); c++) {
                    if (d.persistentName(c) != null) {
                        names.add(d.persistentName(c));
                        named++;
                    }
                }
            }
            assertEquals(named, second.hits(), "each named chunk of each view read from disk");
            assertTrue(names.size() < named, "views showing the same tensor in the same type share chunks on disk: "
                    + names.size() + " files for " + named + " chunks");
        }
    }

    @Test
    void aTruncatedChunkFileIsConvertedAgain() throws Exception {
        OllamaStore store = TinyGgufStore.create(root);
        Map<Long, String> plain;
        DiskChunkStore first = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, first)) {
            plain = TinyGgufStore.digests(served);
            assertTrue(first.flush(10_000));
        }
        Path victim;
        try (var files = Files.walk(cacheDir.resolve("chunks"))) {
            victim = files.filter(Files::isRegularFile).filter(p -> p.toFile().length() > 64).findFirst().orElseThrow();
        }
        try (FileChannel ch = FileChannel.open(victim, StandardOpenOption.WRITE)) {
            ch.truncate(ch.size() / 2);
        }
        DiskChunkStore second = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, second)) {
            long sharing = readersOf(served, victim.getFileName().toString());
            assertEquals(plain, TinyGgufStore.digests(served), "the truncated chunk is not served");
            long again = served.chunks().conversions() - unnamedChunks(served);
            // the first file that meets it converts it again; another file showing the same chunk converts it too
            // when it reads before the background rewrite lands
            assertTrue(again >= 1 && again <= sharing, again + " conversions of the truncated chunk, " + sharing + " files show it");
            assertEquals(1, second.rejected());
        }
    }

    /** The file of the tree with the most chunks that have a persistent name. */
    private static FileNode mostNamedChunks(ServedTree served) {
        FileNode best = null;
        long most = 0;
        for (FileNode f : TinyGgufStore.files(served.tree())) {
            long n = namedChunks(f);
            if (n > most) {
                best = f;
                most = n;
            }
        }
        return best;
    }

    private static long allChunks(FileNode f) {
        long n = 0;
        for (ConvertedData d : f.source().convertedData()) {
            n += (d.length() + d.chunkBytes() - 1) / d.chunkBytes();
        }
        return n;
    }

    /** The distinct persistent names of {@code f}'s chunks (two views of one tensor in one type share a name). */
    private static long namedChunks(FileNode f) {
        Set<String> names = new java.util.HashSet<>();
        for (ConvertedData d : f.source().convertedData()) {
            long chunks = (d.length() + d.chunkBytes() - 1) / d.chunkBytes();
            for (long c = 0; c < chunks; c++) {
                String name = d.persistentName(c);
                if (name != null) {
                    names.add(name);
                }
            }
        }
        return names.size();
    }

    /**
     * Reads {@code f} whole while the disk store's writer is stalled in a trim (it holds the store's lock): the
     * write queue of one fills at once and the rest goes to the backlog. {@code whileStalled} runs before the stall
     * ends. Returns the bytes read.
     */
    private static byte[] readWithStalledWriter(DiskChunkStore disk, FileNode f, OpenedSource o,
                                                Runnable whileStalled) throws IOException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(f.size());
            synchronized (disk) {
                assertEquals(f.size(), o.read(0, buf, 0, f.size()));
                whileStalled.run();
            }
            return buf.toArray(ValueLayout.JAVA_BYTE);
        }
    }

    /** A store bounded so that the first chunk's write trims (and so stalls while the test holds the lock) and removes only a filler. */
    private DiskChunkStore stallableStore() throws IOException {
        long max = 64L << 20;
        DiskChunkStore disk = new DiskChunkStore(cacheDir, max, 1);
        disk.write("filler", Arena.ofAuto().allocate(max - 24 - 1));   // with its 24-byte trailer one byte under the bound
        return disk;
    }

    @Test
    @Timeout(60)
    void chunksTheFullWriteQueueTurnedAwayAreWrittenOnceIdleWhileTheFileIsOpen() throws Exception {
        OllamaStore store = TinyGgufStore.create(root);
        DiskChunkStore disk = stallableStore();
        byte[] first;
        long named;
        long inode;
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 4096, 60_000, Telemetry.NONE, disk)) {
            FileNode f = mostNamedChunks(served);          // a memory cache of one small chunk: the backlog converts again
            named = namedChunks(f);
            inode = f.inode();
            assertTrue(named >= 4, f + ": " + named + " named chunks");
            try (OpenedSource o = OpenedSource.open(f.source(), served.resolver(), served.chunks())) {
                first = readWithStalledWriter(disk, f, o, () -> { });
                assertTrue(disk.flush(10_000));
            }
            assertEquals(0, disk.skipped());
            assertEquals(named - 2, disk.backfilled(), "all but the written and the queued chunk came from the backlog");
            assertEquals(1 + named, disk.writes(), "the filler, then each named chunk once");
            assertTrue(served.chunks().conversions() > named, "chunks no longer in memory were converted again: "
                    + served.chunks().conversions());
        }
        DiskChunkStore again = new DiskChunkStore(cacheDir, 64L << 20, 1);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 4096, 60_000, Telemetry.NONE, again)) {
            FileNode f = TinyGgufStore.files(served.tree()).stream().filter(n -> n.inode() == inode).findFirst().orElseThrow();
            try (OpenedSource o = OpenedSource.open(f.source(), served.resolver(), served.chunks()); Arena a = Arena.ofConfined()) {
                MemorySegment buf = a.allocate(f.size());
                assertEquals(f.size(), o.read(0, buf, 0, f.size()));
                assertArrayEquals(first, buf.toArray(ValueLayout.JAVA_BYTE));
            }
            assertEquals(named, again.hits(), "after a restart every named chunk comes from disk");
            assertEquals(allChunks(f) - named, served.chunks().conversions(), "only chunks without a persistent name converted");
        }
    }

    @Test
    @Timeout(60)
    void aFileClosedBeforeItsBacklogsTurnIsKeptUntilItsChunksAreWrittenThenReleased() throws Exception {
        OllamaStore store = TinyGgufStore.create(root);
        DiskChunkStore disk = stallableStore();
        BlobMappings mappings = new BlobMappings(0);                // no idle mapping kept: a leaked hold stays counted
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 4096, 60_000);
             ChunkCache chunks = new ChunkCache(4096, disk)) {
            FileNode f = mostNamedChunks(served);
            long named = namedChunks(f);
            OpenedSource o = OpenedSource.open(f.source(), BlobResolver.forStore(store, mappings), chunks);
            byte[] read = readWithStalledWriter(disk, f, o, () -> {     // closed before the writer gets to the backlog
                o.close();
                assertTrue(mappings.mappedCount() > 0, "the backlog holds the closed file's blobs");
            });
            assertTrue(disk.flush(10_000));
            assertEquals(0, disk.skipped());
            assertEquals(named - 2, disk.backfilled(), "converted again from the closed file's blobs");
            assertEquals(1 + named, disk.writes());
            assertEquals(0, mappings.mappedCount(), "the last chunk written let go of the file");
            for (ConvertedData d : f.source().convertedData()) {        // what is on disk is what the read returned
                for (long c = 0; c * d.chunkBytes() < d.length(); c++) {
                    String name = d.persistentName(c);
                    if (name != null) {
                        MemorySegment m = Arena.ofAuto().allocate(d.chunkLength(c));
                        assertTrue(disk.read(name, m), name);
                        assertTrue(contains(read, m.toArray(ValueLayout.JAVA_BYTE)), name + " matches bytes of the file as read");
                    }
                }
            }
        } finally {
            mappings.close();
        }
    }

    /** Whether {@code part} occurs in {@code whole}. */
    private static boolean contains(byte[] whole, byte[] part) {
        outer:
        for (int i = 0; i + part.length <= whole.length; i++) {
            for (int j = 0; j < part.length; j++) {
                if (whole[i + j] != part[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
