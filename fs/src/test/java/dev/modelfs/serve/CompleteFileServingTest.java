package dev.modelfs.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.FileIdentity;
import dev.modelfs.bytes.Segment;
import dev.modelfs.cache.CompleteFiles;
import dev.modelfs.cache.DiskChunkStore;
import dev.modelfs.read.OpenedSource;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.telemetry.FileKind;
import dev.modelfs.telemetry.Telemetry;
import dev.modelfs.testing.Poll;
import dev.modelfs.tree.FileNode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Converted once, then served whole ({@link CompleteFileServing}): with a cache directory, a converted file read and
 * closed is assembled as one complete file once its chunks are on disk; a restarted tree opens it as one blob (kind
 * passthrough, which FUSE hands to the kernel) with the bytes of a tree without any cache, converting and reading no
 * chunk; a complete file with a flipped byte is refused, the file served from chunks with the same bytes, and
 * assembled again. The oracle is the tree without a cache directory.
 */
@Timeout(120)
class CompleteFileServingTest {
    @TempDir
    Path root;
    @TempDir
    Path cacheDir;

    private static String read(ServePolicy policy, FileNode f, FileKind expected) throws Exception {
        try (OpenedSource o = policy.open(f); Arena a = Arena.ofConfined()) {
            assertEquals(expected, o.kind(), f.source() + " opened as");
            MemorySegment buf = a.allocate(Math.max(1, f.size()));
            for (long at = 0; at < f.size(); at += 128 * 1024) {     // FUSE-sized reads
                assertEquals(Math.min(128 * 1024, f.size() - at), o.read(at, buf, at, 128 * 1024));
            }
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(buf.asSlice(0, f.size()).toArray(ValueLayout.JAVA_BYTE)));
        }
    }

    private static List<FileNode> wholeable(ServedTree served) {
        return TinyGgufStore.files(served.tree()).stream().filter(f -> FileIdentity.nameOf(f.source()) != null).toList();
    }

    private static void awaitComplete(ServedTree served, CompleteFiles files) throws InterruptedException {
        Poll.until("every complete file assembled", Duration.ofSeconds(60),
                () -> wholeable(served).stream().allMatch(f -> files.present(FileIdentity.nameOf(f.source()))));
    }

    @Test
    void aClosedConvertedFileIsAssembledAndARestartServesItWholeWithTheSameBytes() throws Exception {
        OllamaStore store = TinyGgufStore.create(root);
        Map<Long, String> plain;
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000)) {
            plain = TinyGgufStore.digests(served);
        }
        DiskChunkStore first = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        int n;
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, first)) {
            List<FileNode> files = wholeable(served);
            n = files.size();
            assertTrue(n > 0, "the tiny store has converted files with a complete identity");
            ServePolicy p = served.policy(0, 0);
            for (FileNode f : files) {
                assertEquals(plain.get(f.inode()), read(p, f, FileKind.CONVERTED));
            }
            awaitComplete(served, first.completeFiles());
            assertEquals(0, first.completeFiles().served());
        }
        DiskChunkStore second = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, second)) {
            ServePolicy p = served.policy(0, 0);
            for (FileNode f : wholeable(served)) {
                assertEquals(plain.get(f.inode()), read(p, f, FileKind.PASSTHROUGH));
            }
            assertEquals(0, served.chunks().conversions(), "nothing converted");
            assertEquals(0, second.hits(), "no chunk read");
            assertEquals(n, second.completeFiles().served());
            assertTrue(served.conversionSummary().endsWith("; " + n + " files served from and 0 assembled in the cache directory"),
                    served.conversionSummary());
        }
    }

    /**
     * Every converted tensor file of the store (its variants, its Hugging Face folder's safetensors and the GGUF
     * model's converted safetensors) has a complete-file name; and files read together are all assembled within a
     * bound that holds the complete files but not them and their chunks too: the chunks of an assembled file are
     * trimmed first, never a complete file or the chunks of a file still to be assembled (issue 37: 2 of 3 converted
     * files assembled in the benchmark). The files of the second part share no chunk (views of one model may: a chunk
     * shared with a file read but not yet closed can be demoted with the first, DESIGN.md §2.7).
     */
    @Test
    void everyConvertedFileReadIsAssembledWhenTheBoundHoldsTheFilesButNotTheirChunksToo() throws Exception {
        OllamaStore store = TinyGgufStore.create(root);
        Map<String, FileNode> converted = new java.util.TreeMap<>();
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000)) {
            walk(served.tree().root(), "", converted);
            converted.entrySet().removeIf(e -> e.getValue().source().kind() != FileKind.CONVERTED
                    || e.getKey().endsWith(".json"));           // rebuilt JSON has no identity (FORMATS.md §11)
            for (var e : converted.entrySet()) {
                assertTrue(FileIdentity.nameOf(e.getValue().source()) != null, e.getKey() + " has a complete file name");
            }
        }
        assertTrue(converted.keySet().containsAll(List.of("tiny/model.bf16.gguf", "tiny/model.fp16.gguf", "tiny/model.fp32.gguf")),
                "the variants: " + converted.keySet());
        assertTrue(converted.keySet().stream().anyMatch(k -> k.endsWith(".safetensors")), "converted safetensors: " + converted.keySet());
        java.util.Set<String> chunksTaken = new java.util.HashSet<>();
        List<String> apart = new java.util.ArrayList<>();            // files that share no chunk, in path order
        long total = 0;
        for (var e : converted.entrySet()) {
            java.util.Set<String> mine = new java.util.HashSet<>();
            for (var d : e.getValue().source().convertedData()) {
                for (long ch = 0; ch * d.chunkBytes() < d.length(); ch++) {
                    mine.add(d.persistentName(ch));
                }
            }
            if (java.util.Collections.disjoint(mine, chunksTaken)) {
                chunksTaken.addAll(mine);
                apart.add(e.getKey());
                total += e.getValue().size();
            }
        }
        assertTrue(apart.size() >= 3, "files without a shared chunk: " + apart);
        DiskChunkStore disk = new DiskChunkStore(cacheDir, total * 6 / 5, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, disk)) {
            Map<String, FileNode> now = new java.util.TreeMap<>();
            walk(served.tree().root(), "", now);
            ServePolicy p = served.policy(0, 0);
            List<OpenedSource> open = new java.util.ArrayList<>();
            for (String path : apart) {                          // every file read before any is closed and assembled
                FileNode f = now.get(path);
                OpenedSource o = p.open(f);
                open.add(o);
                try (Arena a = Arena.ofConfined()) {
                    MemorySegment buf = a.allocate(Math.max(1, f.size()));
                    assertEquals(f.size(), o.read(0, buf, 0, f.size()));
                }
            }
            assertTrue(disk.flush(10_000));
            open.forEach(OpenedSource::close);
            Poll.until("the assembler is done", Duration.ofSeconds(60), () -> served.completeFiles().idle());
            for (String path : apart) {
                assertTrue(disk.completeFiles().present(FileIdentity.nameOf(now.get(path).source())), path + " kept whole");
            }
            assertEquals(apart.size(), disk.completeFiles().assembled());
        }
    }

    private static void walk(dev.modelfs.tree.DirNode dir, String prefix, Map<String, FileNode> out) {
        for (var e : dir.children().entrySet()) {
            switch (e.getValue()) {
                case dev.modelfs.tree.DirNode d -> walk(d, prefix + e.getKey() + "/", out);
                case FileNode f -> out.put(prefix + e.getKey(), f);
            }
        }
    }

    /**
     * A GGUF in Ollama's dialect whose translation computes tensors with an identity (gemma3's projector face: F16
     * position and patch embeddings promoted to F32, FORMATS.md §12) is kept whole once read, and a restarted tree
     * serves it from that file with the bytes of a tree without a cache.
     */
    @Test
    void aTranslatedGgufWithComputedTensorsIsAssembledAndServedWhole() throws Exception {
        OllamaStore store = TinyGgufStore.create(root, dev.modelfs.dialect.TinyGguf.gemma3Dialect().bytes());
        String path = "tiny/mmproj.gguf";
        Map<Long, String> plain = new java.util.HashMap<>();
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000)) {
            Map<String, FileNode> files = new java.util.TreeMap<>();
            walk(served.tree().root(), "", files);
            FileNode f = files.get(path);
            assertTrue(f != null, "the projector face: " + files.keySet());
            plain.put(f.inode(), read(served.policy(0, 0), f, FileKind.CONVERTED));
        }
        DiskChunkStore first = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, first)) {
            Map<String, FileNode> files = new java.util.TreeMap<>();
            walk(served.tree().root(), "", files);
            FileNode f = files.get(path);
            assertEquals(FileKind.CONVERTED, f.source().kind());
            String name = FileIdentity.nameOf(f.source());
            assertTrue(name != null, "its computed tensors have an identity");
            assertEquals(plain.get(f.inode()), read(served.policy(0, 0), f, FileKind.CONVERTED));
            Poll.until("assembled", Duration.ofSeconds(60), () -> first.completeFiles().present(name));
        }
        DiskChunkStore second = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, second)) {
            Map<String, FileNode> files = new java.util.TreeMap<>();
            walk(served.tree().root(), "", files);
            FileNode f = files.get(path);
            assertEquals(plain.get(f.inode()), read(served.policy(0, 0), f, FileKind.PASSTHROUGH));
            assertEquals(0, served.chunks().conversions(), "nothing converted");
            assertEquals(0, second.completeFiles().verified(), "trusted by its record's identity, not read to be opened");
        }
    }

    @Test
    void aCorruptCompleteFileIsRefusedServedFromChunksAndAssembledAgain() throws Exception {
        OllamaStore store = TinyGgufStore.create(root);
        Map<Long, String> plain;
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000)) {
            plain = TinyGgufStore.digests(served);
        }
        FileNode victim;
        Path data;
        DiskChunkStore first = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, first)) {
            victim = wholeable(served).getFirst();
            read(served.policy(0, 0), victim, FileKind.CONVERTED);
            String name = FileIdentity.nameOf(victim.source());
            Poll.until("assembled", Duration.ofSeconds(60), () -> first.completeFiles().present(name));
            data = first.completeFiles().fileOf(name);
        }
        byte[] b = Files.readAllBytes(data);
        FileTime t = Files.getLastModifiedTime(data);
        b[b.length - 1] ^= 1;
        Files.write(data, b);
        Files.setLastModifiedTime(data, t);
        DiskChunkStore second = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, second)) {
            FileNode f = TinyGgufStore.files(served.tree()).stream().filter(x -> x.inode() == victim.inode()).findFirst().orElseThrow();
            ServePolicy p = served.policy(0, 0);
            assertEquals(plain.get(f.inode()), read(p, f, FileKind.CONVERTED), "refused: served from chunks");
            assertEquals(1, second.completeFiles().rejected());
            assertTrue(second.hits() > 0, "its chunks came from disk");
            Poll.until("assembled again", Duration.ofSeconds(60), () -> second.completeFiles().present(FileIdentity.nameOf(f.source())));
            assertEquals(plain.get(f.inode()), read(p, f, FileKind.PASSTHROUGH), "the rebuilt file is served");
        }
    }

    @Test
    void aFileWithAChunkMissingOnDiskIsNotAssembledAndNothingIsConvertedForIt() throws Exception {
        OllamaStore store = TinyGgufStore.create(root);
        DiskChunkStore disk = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, disk)) {
            FileNode f = wholeable(served).getFirst();
            String name = FileIdentity.nameOf(f.source());
            OpenedSource o = served.policy(0, 0).open(f);
            try (Arena a = Arena.ofConfined()) {
                MemorySegment buf = a.allocate(f.size());
                assertEquals(f.size(), o.read(0, buf, 0, f.size()));
            }
            assertTrue(disk.flush(10_000));
            var data = f.source().convertedData().getFirst();
            Files.delete(disk.fileOf(data.persistentName(0)));
            long converted = served.chunks().conversions();
            o.close();                                           // asks for the complete file
            Poll.until("the assembler is done", Duration.ofSeconds(60), () -> served.completeFiles().idle());
            assertFalse(disk.completeFiles().present(name), "not all its chunks are on disk: not assembled");
            assertEquals(converted, served.chunks().conversions(), "assembly converts nothing");
        }
    }

    /**
     * A chunk writer that never finishes (a cache disk that stalls, or other files' chunks queued without end) once
     * held the assembler, and every file queued behind, for good: it waited for as long as the writer had work. Now
     * it gives the file up once its missing chunks have not come for the stall bound (here 300 ms); with no bound
     * this test fails (the assembler is never idle).
     */
    @Test
    void aChunkWriterThatNeverFinishesDoesNotHoldTheAssemblerForEver() throws Exception {
        OllamaStore store = TinyGgufStore.create(root);
        DiskChunkStore disk = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, disk);
             FileAssembler assembler = new FileAssembler(disk, served.resolver(), served.chunks(), () -> 1,
                     Duration.ofMillis(300), Duration.ofMinutes(10))) {
            FileNode f = wholeable(served).getFirst();          // never read: none of its chunks is on disk
            String name = FileIdentity.nameOf(f.source());
            assembler.offer(name, f.source());
            Poll.until("the assembler gives the file up", Duration.ofSeconds(30), assembler::idle);
            assertEquals(1, assembler.incomplete(), "given up as incomplete");
            assertFalse(disk.completeFiles().present(name), "nothing installed");
        }
    }

    /**
     * A GGUF in Ollama's dialect whose translation only rewrites its header ({@code model.gguf} of gemma3's text model:
     * a new header, the tensors read from the blob, kind reassembled) is kept whole once read as well (llama.cpp maps
     * it, and a map through FUSE is slower than a whole file by passthrough), and a restarted tree serves it from that
     * file with the bytes of a tree without a cache.
     */
    @Test
    void aTranslatedGgufThatOnlyRewritesItsHeaderIsAssembledAndServedWhole() throws Exception {
        OllamaStore store = TinyGgufStore.create(root, dev.modelfs.dialect.TinyGguf.gemma3Dialect().bytes());
        String path = "tiny/model.gguf";
        String plain;
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000)) {
            Map<String, FileNode> files = new java.util.TreeMap<>();
            walk(served.tree().root(), "", files);
            assertTrue(files.containsKey("tiny/ollama/model.gguf"), "a translation: " + files.keySet());
            plain = read(served.policy(0, 0), files.get(path), FileKind.REASSEMBLED);
        }
        DiskChunkStore first = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, first)) {
            Map<String, FileNode> files = new java.util.TreeMap<>();
            walk(served.tree().root(), "", files);
            FileNode f = files.get(path);
            String name = FileIdentity.nameOf(f.source());
            assertTrue(name != null, "a reassembled GGUF has a complete file name");
            assertEquals(plain, read(served.policy(0, 0), f, FileKind.REASSEMBLED));
            Poll.until("assembled", Duration.ofSeconds(60), () -> first.completeFiles().present(name));
        }
        DiskChunkStore second = new DiskChunkStore(cacheDir, 64 << 20, 4096);
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000, Telemetry.NONE, second)) {
            Map<String, FileNode> files = new java.util.TreeMap<>();
            walk(served.tree().root(), "", files);
            assertEquals(plain, read(served.policy(0, 0), files.get(path), FileKind.PASSTHROUGH));
            assertEquals(1, second.completeFiles().served());
        }
    }

    @Test
    void filesWithoutConvertedBytesOrWithoutAnIdentityHaveNoCompleteFile() {
        assertNull(FileIdentity.nameOf(ByteSource.literal(new byte[] {1, 2, 3})));
        assertNull(FileIdentity.nameOf(ByteSource.of(new Segment.Zeros(10))));
        dev.modelfs.bytes.BlobRef blob = new dev.modelfs.bytes.BlobRef(
                dev.modelfs.store.Digest.parse("sha256:" + "cd".repeat(32)).orElseThrow(), 1000);
        assertNull(FileIdentity.nameOf(ByteSource.of(new Segment.Literal("{\"a\":1}".getBytes()),
                new Segment.BlobSlice(blob, 8, 992))), "a reassembled safetensors file is served from its blobs");
        assertEquals(64, FileIdentity.nameOf(ByteSource.of(new Segment.Literal("GGUF\3\0\0\0".getBytes()),
                new Segment.BlobSlice(blob, 8, 992))).length(), "a reassembled GGUF is kept whole");
        // a converted file's name covers every segment: another header byte, another name
        OllamaStore store;
        try {
            store = TinyGgufStore.create(root);
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 64 << 20, 60_000)) {
            FileNode f = wholeable(served).getFirst();
            String name = FileIdentity.nameOf(f.source());
            assertEquals(64, name.length());
            assertEquals(name, FileIdentity.nameOf(f.source()), "stable");
            List<Segment> segs = new java.util.ArrayList<>();
            boolean changed = false;
            for (int i = 0; i < f.source().segmentCount(); i++) {
                Segment s = f.source().segment(i);
                if (!changed && s instanceof Segment.Literal l && l.bytes().length > 0) {
                    byte[] c = l.bytes().clone();
                    c[0] ^= 1;
                    s = new Segment.Literal(c);
                    changed = true;
                }
                segs.add(s);
            }
            assertTrue(changed);
            assertFalse(name.equals(FileIdentity.nameOf(new ByteSource(segs))));
        }
    }
}
