package dev.modelfs.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.ByteSource;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.read.Errno;
import dev.modelfs.read.ReadAhead;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServePolicyTest {
    @TempDir
    Path store;

    private ServePolicy policy() {
        return new ServePolicy(store, ref -> {
            throw new NoSuchFileException(ref.digest().fileName());
        }, new ChunkCache(1 << 16), ReadAhead.NONE, 1000, 2000);
    }

    @Test
    void filesAreReadOnlyWithBlocksRoundedUpAndTheNodesTime() {
        FileNode f = new FileNode(42, -1_500_000_000L, ByteSource.literal(new byte[513]), Map.of());
        ServePolicy.Attributes a = policy().attributes(f);
        assertEquals(new ServePolicy.Attributes(42, false, 0444, 1, 513, 2, 1000, 2000, -1_500_000_000L), a);
        assertEquals(-2, a.mtimeSeconds(), "floor, so times before 1970 keep their order");
        assertEquals(500_000_000, a.mtimeNanosOfSecond());
    }

    @Test
    void directoriesAre0555WithTwoLinksAndSize4096() {
        DirNode d = DirNode.of(9, 3_000_000_001L, new java.util.TreeMap<>());
        assertEquals(new ServePolicy.Attributes(9, true, 0555, 2, 4096, 8, 1000, 2000, 3_000_000_001L),
                policy().attributes(d));
    }

    @Test
    void aFailureIsTranslatedOnceAndLoggedOnce() {
        List<String> lines = new ArrayList<>();
        Logger log = Logger.getLogger(ServePolicy.class.getName());
        Handler h = new Handler() {
            @Override public void publish(LogRecord r) { lines.add(r.getMessage()); }
            @Override public void flush() { }
            @Override public void close() { }
        };
        log.addHandler(h);
        try {
            ServePolicy p = policy();
            assertEquals(Errno.ENOENT, p.failed("open /a", new NoSuchFileException("blob")));
            assertEquals(Errno.ENOENT, p.failed("open /a", new NoSuchFileException("blob")));
            assertEquals(Errno.EIO, p.failed("read /a", new IOException("short")));
            assertEquals(2, lines.size(), lines.toString());
            assertTrue(lines.get(0).startsWith("open /a: "), lines.get(0));
        } finally {
            log.removeHandler(h);
        }
    }

    @Test
    void spaceIsThatOfTheStoresFileSystem() throws IOException {
        ServePolicy.Space s = policy().space();
        assertTrue(s.blockSize() >= 1);
        assertTrue(s.totalBytes() > 0);
        assertFalse(s.availableBytes() > s.totalBytes());
        assertEquals(java.nio.file.Files.getFileStore(store).getTotalSpace(), s.totalBytes());
    }
}
