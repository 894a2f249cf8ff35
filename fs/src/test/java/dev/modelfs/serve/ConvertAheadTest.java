package dev.modelfs.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.FileIdentity;
import dev.modelfs.cache.CompleteFiles;
import dev.modelfs.cache.DiskChunkStore;
import dev.modelfs.read.OpenedSource;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.telemetry.FileKind;
import dev.modelfs.telemetry.Telemetry;
import dev.modelfs.testing.Poll;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Converting ahead of readers ({@link ConvertAhead}) over a real store on disk (the tiny GGUF model): the model's own
 * converted {@code model.safetensors} is written whole into the cache directory with nobody reading, and no other
 * file; opened, it is served as one blob with the bytes a tree without a cache directory serves (the oracle), no chunk
 * of the served cache converted; a file that would leave less than 15 % of the bound free is not converted; a tree
 * without a cache directory has nothing to convert ahead.
 */
@Timeout(120)
class ConvertAheadTest {
    @TempDir
    Path root;
    @TempDir
    Path cacheDir;

    private static FileNode own(ServedTree served) {
        DirNode model = (DirNode) served.tree().root().child("tiny");
        return (FileNode) model.child("model.safetensors");
    }

    private static String digest(OpenedSource o, long size) throws Exception {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(Math.max(1, size));
            assertEquals(size, o.read(0, buf, 0, size));
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(buf.toArray(ValueLayout.JAVA_BYTE)));
        }
    }

    @Test
    void theModelsOwnConvertedFileIsWrittenWholeWithNobodyReadingAndServedAsOneBlob() throws Exception {
        OllamaStore store = TinyGgufStore.create(root);
        Map<Long, String> plain;
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000)) {
            plain = TinyGgufStore.digests(served);
        }
        DiskChunkStore disk = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, disk)) {
            FileNode f = own(served);
            assertEquals(FileKind.CONVERTED, f.source().kind());
            String name = FileIdentity.nameOf(f.source());
            assertNotNull(name);
            CompleteFiles files = disk.completeFiles();
            served.convertAhead();
            Poll.until("model.safetensors converted ahead", Duration.ofSeconds(60), () -> files.present(name));
            Poll.until("the pass over the store ended", Duration.ofSeconds(60), () -> served.ahead().passes() >= 1);
            assertEquals(1, served.ahead().converted());
            for (FileNode other : TinyGgufStore.files(served.tree())) {
                String n = FileIdentity.nameOf(other.source());
                if (n != null && !n.equals(name)) {
                    assertFalse(files.present(n), "only the model's own folder's file is converted ahead: " + other.source());
                }
            }
            assertEquals(0, served.chunks().conversions(), "nothing converted into the served chunk cache");
            try (OpenedSource o = served.policy(0, 0).open(f)) {
                assertEquals(FileKind.PASSTHROUGH, o.kind(), "served as one blob: the complete file");
                assertEquals(plain.get(f.inode()), digest(o, f.size()));
            }
        }
    }

    /** A translated {@code model.gguf} of Ollama's dialect (a new header over the blob's tensor data) is converted ahead too. */
    @Test
    void aTranslatedGgufIsWrittenWholeAhead() throws Exception {
        OllamaStore store = TinyGgufStore.create(root, dev.modelfs.dialect.TinyGguf.gemma3Dialect().bytes());
        DiskChunkStore disk = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, disk)) {
            FileNode f = (FileNode) ((DirNode) served.tree().root().child("tiny")).child("model.gguf");
            assertEquals(FileKind.REASSEMBLED, f.source().kind());
            String name = FileIdentity.nameOf(f.source());
            assertNotNull(name);
            served.convertAhead();
            Poll.until("the pass over the store ended", Duration.ofSeconds(60), () -> served.ahead().passes() >= 1);
            assertTrue(disk.completeFiles().present(name), "model.gguf converted ahead");
        }
    }

    @Test
    void aFileThatWouldLeaveLessThanAFifteenthOfTheBoundFreeIsNotConverted() throws Exception {
        OllamaStore store = TinyGgufStore.create(root);
        long size;
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000)) {
            size = own(served).size();
        }
        DiskChunkStore disk = new DiskChunkStore(cacheDir, size + size / 10, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, disk)) {
            served.convertAhead();
            Poll.until("the pass over the store ended", Duration.ofSeconds(60), () -> served.ahead().passes() >= 1);
            assertEquals(0, served.ahead().converted());
            assertFalse(disk.completeFiles().present(FileIdentity.nameOf(own(served).source())));
            assertEquals(disk.bound(), disk.room(), "nothing written");
        }
    }

    @Test
    void aTreeWithoutACacheDirectoryConvertsNothingAhead() throws Exception {
        try (ServedTree served = ServedTree.open(TinyGgufStore.create(root), StandardViews.all(), 64 << 20, 60_000)) {
            served.convertAhead();
            assertNull(served.ahead());
        }
    }

    @Test
    void stoppingTheTreeEndsConvertingAhead() throws Exception {
        DiskChunkStore disk = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        ServedTree served = ServedTree.open(TinyGgufStore.create(root), StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, disk);
        served.convertAhead();
        ConvertAhead ahead = served.ahead();
        served.close();
        assertTrue(ahead.stop(Duration.ZERO), "ended by close, which waited for it");
    }
}
