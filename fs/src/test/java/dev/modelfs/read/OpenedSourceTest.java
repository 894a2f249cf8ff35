package dev.modelfs.read;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.bytes.Segment;
import dev.modelfs.cache.BlobMappings;
import dev.modelfs.cache.BlobSizeMismatchException;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.store.Digest;
import dev.modelfs.testing.Poll;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reads through every segment kind at every boundary, checked against an independently built whole-file oracle. */
class OpenedSourceTest {
    @TempDir
    Path dir;

    final BlobMappings mappings = new BlobMappings(4);
    final Map<Digest, Path> files = new HashMap<>();
    final BlobResolver resolver = ref -> {
        Path p = files.get(ref.digest());
        if (p == null || !Files.exists(p)) {
            throw new NoSuchFileException(ref.digest().fileName());
        }
        return mappings.acquire(ref.digest().hex(), p, ref.expectedSize());
    };

    BlobRef blob(byte[] content) throws IOException {
        Digest d = new Digest(String.format("%064x", files.size() + 1));
        Path p = dir.resolve(d.fileName());
        Files.write(p, content);
        files.put(d, p);
        return new BlobRef(d, content.length);
    }

    /** Converted data whose byte i is a function of a blob byte, so the oracle is easy to compute independently. */
    static final class XorConverted extends ConvertedData {
        final BlobRef src;
        final long chunk;
        final AtomicInteger computes = new AtomicInteger();

        XorConverted(BlobRef src, long chunk) {
            this.src = src;
            this.chunk = chunk;
        }

        @Override public long length() { return src.expectedSize(); }
        @Override public long chunkBytes() { return chunk; }
        @Override public List<BlobRef> blobs() { return List.of(src); }
        @Override public String describe() { return "xor"; }

        @Override
        public void compute(long c, List<MemorySegment> blobs, MemorySegment out) {
            computes.incrementAndGet();
            long base = c * chunk;
            for (long i = 0; i < out.byteSize(); i++) {
                out.set(ValueLayout.JAVA_BYTE, i, (byte) (blobs.get(0).get(ValueLayout.JAVA_BYTE, base + i) ^ 0x5a));
            }
        }
    }

    @Test
    void everyRangeMatchesTheOracle() throws IOException {
        Random rnd = new Random(42);
        ByteArrayOutputStream oracle = new ByteArrayOutputStream();
        List<Segment> segs = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            byte[] b = new byte[1 + rnd.nextInt(i == 2 || i == 6 ? 50_000 : 300)];   // two slices large enough for pread
            rnd.nextBytes(b);
            switch (i % 4) {
                case 0 -> {
                    segs.add(new Segment.Literal(b));
                    oracle.writeBytes(b);
                }
                case 1 -> {
                    segs.add(new Segment.Zeros(b.length));
                    oracle.writeBytes(new byte[b.length]);
                }
                case 2 -> {
                    BlobRef r = blob(b);
                    int off = rnd.nextInt(b.length);
                    int len = rnd.nextInt(b.length - off + 1);
                    segs.add(new Segment.BlobSlice(r, off, len));
                    oracle.write(b, off, len);
                }
                default -> {
                    BlobRef r = blob(b);
                    segs.add(new Segment.Converted(new XorConverted(r, 1 + rnd.nextInt(40))));
                    for (byte x : b) {
                        oracle.write(x ^ 0x5a);
                    }
                }
            }
        }
        byte[] want = oracle.toByteArray();
        ByteSource src = new ByteSource(segs);
        assertEquals(want.length, src.size());
        try (OpenedSource o = OpenedSource.open(src, resolver, new ChunkCache(1 << 20))) {
            for (int start = 0; start <= want.length; start += start < 4096 ? 7 : 509) {
                for (int len : new int[] {1, 3, 64, 129, 4096, 40000}) {
                    MemorySegment dst = len % 2 == 0 ? java.lang.foreign.Arena.ofAuto().allocate(len + 5)
                            : MemorySegment.ofArray(new byte[len + 5]);
                    long n = o.read(start, dst, 5, len);
                    int expectN = Math.max(0, Math.min(len, want.length - start));
                    assertEquals(expectN, n, "bytes at " + start + "+" + len);
                    byte[] got = new byte[expectN];
                    MemorySegment.copy(dst, ValueLayout.JAVA_BYTE, 5, got, 0, expectN);
                    byte[] exp = java.util.Arrays.copyOfRange(want, Math.min(start, want.length), Math.min(start, want.length) + expectN);
                    assertArrayEquals(exp, got, "range " + start + "+" + len);
                }
            }
        }
    }

    @Test
    void readAheadConvertsTheChunksAfterASequentialReaderAndReadsStayExact() throws Exception {
        byte[] b = new byte[64 * 1000];
        new Random(3).nextBytes(b);
        XorConverted x = new XorConverted(blob(b), 1000);
        XorConverted y = new XorConverted(blob(b), 700);
        ByteSource src = ByteSource.of(new Segment.Converted(x), new Segment.Literal(new byte[] {1, 2, 3}), new Segment.Converted(y));
        try (ReadAhead ahead = new ReadAhead(2, 20_000); ChunkCache cache = new ChunkCache(1 << 20)) {
            OpenedSource o = OpenedSource.open(src, resolver, cache, ahead);
            MemorySegment dst = MemorySegment.ofArray(new byte[500]);
            o.read(0, dst, 0, 500);                                   // sequential from 0: asks for the window
            Poll.within(Duration.ofSeconds(30), () -> x.computes.get() >= 20);
            assertEquals(20, x.computes.get(), "chunks 0..19 (20,000 bytes of window) converted ahead, each once");
            long pos = 500;
            byte[] all = new byte[(int) src.size()];
            MemorySegment.copy(dst, ValueLayout.JAVA_BYTE, 0, all, 0, 500);
            while (pos < src.size()) {                                // the rest, sequentially, across tensors
                MemorySegment d = java.lang.foreign.Arena.ofAuto().allocate(4096);
                long n = o.read(pos, d, 0, 4096);
                MemorySegment.copy(d, ValueLayout.JAVA_BYTE, 0, all, (int) pos, (int) n);
                pos += n;
            }
            for (int i = 0; i < b.length; i++) {
                assertEquals((byte) (b[i] ^ 0x5a), all[i]);
                assertEquals((byte) (b[i] ^ 0x5a), all[b.length + 3 + i]);
            }
            assertEquals(64, x.computes.get(), "no chunk converted twice while cached");
            o.close();
            assertThrows(IllegalStateException.class, () -> o.read(0, dst, 0, 1));
        }
    }

    /** A range inside one blob slice is found in one search and named by descriptor and position; any other range is not. */
    @Test
    void aRangeInsideOneBlobSliceIsSpliceableAtItsBlobPosition() throws IOException {
        byte[] b = new byte[10_000];
        new Random(5).nextBytes(b);
        BlobRef r = blob(b);
        ByteSource src = ByteSource.of(new Segment.Literal(new byte[100]), new Segment.BlobSlice(r, 1000, 5000),
                new Segment.Converted(new XorConverted(r, 512)));
        try (OpenedSource o = OpenedSource.open(src, resolver, new ChunkCache(1 << 20))) {
            int seg = o.blobSegment(100 + 200, 4000);
            assertEquals(1, seg);
            assertEquals(1200, o.blobPosition(seg, 300));
            java.nio.ByteBuffer got = java.nio.ByteBuffer.allocate(4000);
            try (var ch = java.nio.channels.FileChannel.open(java.nio.file.Path.of("/proc/self/fd/" + o.blobDescriptor(seg)))) {
                ch.read(got, 1200);
            }
            assertArrayEquals(java.util.Arrays.copyOfRange(b, 1200, 5200), got.array());
            assertEquals(-1, o.blobSegment(50, 100), "starts in a literal");
            assertEquals(-1, o.blobSegment(4000, 2000), "runs past the slice");
            assertEquals(-1, o.blobSegment(5200, 10), "converted bytes");
            assertEquals(-1, o.blobSegment(src.size(), 10), "at the end");
        }
    }

    @Test
    void convertedChunksAreComputedOnceThenCached() throws IOException {
        byte[] b = new byte[1000];
        new Random(1).nextBytes(b);
        XorConverted x = new XorConverted(blob(b), 100);
        ByteSource src = ByteSource.of(new Segment.Converted(x));
        try (OpenedSource o = OpenedSource.open(src, resolver, new ChunkCache(1 << 20))) {
            MemorySegment dst = MemorySegment.ofArray(new byte[1000]);
            o.read(0, dst, 0, 1000);
            o.read(250, dst, 0, 500);
            assertEquals(10, x.computes.get());
        }
    }

    @Test
    void missingBlobIsNoSuchFileAndShortBlobIsSizeMismatch() throws IOException {
        BlobRef r = blob(new byte[10]);
        BlobRef wrongSize = new BlobRef(r.digest(), 11);
        assertThrows(BlobSizeMismatchException.class,
                () -> OpenedSource.open(ByteSource.of(new Segment.BlobSlice(wrongSize, 0, 11)), resolver, new ChunkCache(0)));
        BlobRef missing = new BlobRef(new Digest("f".repeat(64)), 3);
        assertThrows(NoSuchFileException.class,
                () -> OpenedSource.open(ByteSource.of(new Segment.BlobSlice(missing, 0, 3)), resolver, new ChunkCache(0)));
    }

    @Test
    void blobTruncatedAfterMappingIsAnIOExceptionNotACrash() throws IOException {
        byte[] b = new byte[1 << 20];
        new Random(3).nextBytes(b);
        BlobRef r = blob(b);
        try (OpenedSource o = OpenedSource.open(ByteSource.of(new Segment.BlobSlice(r, 0, b.length)), resolver, new ChunkCache(0))) {
            try (RandomAccessFile raf = new RandomAccessFile(files.get(r.digest()).toFile(), "rw")) {
                raf.setLength(4096);
            }
            MemorySegment heap = MemorySegment.ofArray(new byte[65536]);      // copied from the mapping
            MemorySegment direct = java.lang.foreign.Arena.ofAuto().allocate(65536);   // pread into it
            assertEquals(4096, o.read(0, heap, 0, 4096));
            assertEquals(4096, o.read(0, direct, 0, 4096));
            assertThrows(IOException.class, () -> o.read(512 * 1024, heap, 0, 65536));
            assertThrows(IOException.class, () -> o.read(512 * 1024, direct, 0, 65536));
            // small reads straddling the new end, inside its last page (zeros there, not a fault, in the mapping)
            try (RandomAccessFile raf = new RandomAccessFile(files.get(r.digest()).toFile(), "rw")) {
                raf.setLength(4000);
            }
            assertThrows(IOException.class, () -> o.read(3990, heap, 0, 100));
            assertThrows(IOException.class, () -> o.read(3990, direct, 0, 100));
            assertEquals(10, o.read(3990, direct, 0, 10));
        }
    }

    @Test
    void mappingsAreSharedAndReleased() throws IOException {
        BlobRef r = blob(new byte[100]);
        ByteSource src = ByteSource.of(new Segment.BlobSlice(r, 0, 100));
        BlobMappings m = new BlobMappings(0);
        BlobResolver res = ref -> m.acquire(ref.digest().hex(), files.get(ref.digest()), ref.expectedSize());
        OpenedSource a = OpenedSource.open(src, res, new ChunkCache(0));
        OpenedSource b = OpenedSource.open(src, res, new ChunkCache(0));
        assertEquals(1, m.mappedCount());
        a.close();
        assertEquals(1, m.mappedCount());
        b.close();
        assertEquals(0, m.mappedCount());
        assertThrows(IllegalStateException.class, () -> b.read(0, MemorySegment.ofArray(new byte[1]), 0, 1));
    }
}
