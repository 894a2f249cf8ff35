package dev.modelfs.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.cache.DiskChunkStore;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.telemetry.Telemetry;
import dev.modelfs.tree.FileNode;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Converted files read through a served tree with an on-disk chunk cache ({@code --cache-dir}): after a
 * restart (a new tree, new process-local ids) the chunks come from disk, nothing with a persistent name is
 * converted again, and the bytes are those of a tree without the disk cache; a truncated chunk file is
 * converted again. (The write queue is made long enough here that no write is skipped.)
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
            assertTrue(first.hits() > 0, "views showing the same tensor in the same type share chunks on disk");
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
}
