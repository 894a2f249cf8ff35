package dev.modelfs.warmup;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.bytes.Segment;
import dev.modelfs.serve.ServedTree;
import dev.modelfs.serve.StandardViews;
import dev.modelfs.serve.TinyGgufStore;
import dev.modelfs.tree.FileNode;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the warm-ups choose to read: each kernel's largest data, and the plain files whose
 * reads cross segments (a first read that takes a branch the warm-up never took deoptimizes the read path in the
 * middle of that read: BENCHMARKS.md, stop 22).
 */
class WarmupChoicesTest {

    @TempDir
    Path root;

    /** Data of {@code length} bytes that names {@code kernel} and is never computed here. */
    private static ConvertedData data(String kernel, long length) {
        return new ConvertedData() {
            @Override public long length() { return length; }
            @Override public long chunkBytes() { return length; }
            @Override public List<BlobRef> blobs() { return List.of(); }
            @Override public void compute(long chunk, List<MemorySegment> blobs, MemorySegment out) {
                throw new AssertionError("not computed by a choice");
            }
            @Override public String describe() { return kernel; }
            @Override public String kernel() { return kernel; }
        };
    }

    private static FileNode file(long inode, Segment... segments) {
        return new FileNode(inode, 0, ByteSource.of(segments), Map.of());
    }

    private static Segment.Literal bytes(int n) {
        return new Segment.Literal(new byte[n]);
    }

    @Test
    void theReadPathsRegionsAreEachKernelsLargestDataInARealStore() throws Exception {
        try (ServedTree served = ServedTree.open(TinyGgufStore.create(root), StandardViews.all(), 1 << 20, 60_000)) {
            List<ReadPathWarmup.Region> regions = KernelWarmup.regionsToRead(served.tree(), 16, 64);
            assertTrue(regions.size() > 2, regions.toString());
            List<FileNode> all = TinyGgufStore.files(served.tree());
            for (ReadPathWarmup.Region r : regions) {
                ByteSource s = r.file().source();
                if (r.kernel().isEmpty()) {
                    assertEquals(0, r.start(), r.path() + ": a plain file is read from its start");
                    assertEquals(r.file().size(), r.length(), r.path() + ": and whole");
                    assertTrue(s.convertedData().isEmpty(), r.path().toString());
                    continue;
                }
                int at = s.segmentAt(r.start());
                assertEquals(r.start(), s.start(at), r.path() + ": a region starts where a segment does");
                assertTrue(s.segment(at) instanceof Segment.Converted c && r.kernel().equals(c.data().kernel())
                        && c.data().length() == r.length(), r.path() + " at " + r.start() + ": one data of " + r.kernel());
                for (FileNode f : all) {
                    for (int i = 0; i < f.source().segmentCount(); i++) {
                        assertFalse(f.source().segment(i) instanceof Segment.Converted c && r.kernel().equals(c.data().kernel())
                                && c.data().length() > r.length(), r.kernel() + ": no data of it in the store is longer");
                    }
                }
            }
            assertEquals(regions.size(), regions.stream().map(ReadPathWarmup.Region::kernel).distinct().count(), "one region per kernel");
            assertTrue(regions.stream().anyMatch(r -> r.start() > 0 && !r.kernel().isEmpty()), "kernels' data lies past a header");
            assertEquals(2, KernelWarmup.regionsToRead(served.tree(), 16, 2).size(), "at most maxRegions");
        }
    }

    @Test
    void theFrontEndsReadTheLargestPlainFileAndTheOneOfMostSegments() {
        KernelWarmup.PlainFiles pick = new KernelWarmup.PlainFiles();
        pick.offer(Path.of("a/model.gguf"), file(1, bytes(5000)));                               // largest, one segment
        pick.offer(Path.of("b/model.safetensors"), file(2, bytes(10), bytes(20), bytes(30)));    // three segments
        pick.offer(Path.of("b/config.json"), file(3, bytes(10), bytes(10)));
        pick.offer(Path.of("a/model.fp32.gguf"), file(4, bytes(10), new Segment.Converted(data("x", 90_000))));  // converted
        assertEquals(List.of(Path.of("a/model.gguf"), Path.of("b/model.safetensors")), pick.chosen());

        KernelWarmup.PlainFiles one = new KernelWarmup.PlainFiles();
        one.offer(Path.of("c/model.safetensors"), file(5, bytes(4000), bytes(4000)));
        one.offer(Path.of("c/config.json"), file(6, bytes(10)));
        assertEquals(List.of(Path.of("c/model.safetensors")), one.chosen(), "the largest is also the one of most segments");
        assertEquals(List.of(), new KernelWarmup.PlainFiles().chosen());
    }

    @Test
    void theFuseWarmUpCrossesEachSegmentBoundaryOrAtMostMaxSpreadOverTheFile() {
        FileNode three = new FileNode(1, 0, ByteSource.of(new Segment.Literal(new byte[8]), new Segment.Literal(new byte[100]),
                new Segment.Literal(new byte[50])), Map.of());
        assertArrayEquals(new long[] {8, 108}, KernelWarmup.segmentBoundaries(three, 64), "where the segments meet");
        FileNode whole = new FileNode(2, 0, ByteSource.of(new Segment.Literal(new byte[4096])), Map.of());
        assertArrayEquals(new long[0], KernelWarmup.segmentBoundaries(whole, 64), "one segment: nothing to cross");
        Segment[] many = new Segment[1001];
        java.util.Arrays.fill(many, new Segment.Literal(new byte[10]));
        long[] spread = KernelWarmup.segmentBoundaries(new FileNode(3, 0, ByteSource.of(many), Map.of()), 64);
        assertEquals(64, spread.length, "at most 64");
        assertEquals(10, spread[0], "the first boundary");
        assertTrue(spread[63] >= 9000 && spread[63] < 10010, "the last ones near the end: " + spread[63]);
        for (int k = 1; k < spread.length; k++) {
            assertTrue(spread[k] > spread[k - 1] && spread[k] % 10 == 0, "distinct boundaries, in order");
        }
    }

    @Test
    void aRegionWhoseReadsCostFarMoreThanTheirBytesIsCutOffNotReadForMinutes() {
        // 262,144 chunks of 4 bytes, 20 µs each: reading the MiB once takes 5 s, the 6,000 small reads two minutes.
        // What is checked is the work done (chunks computed), not the time it took: the machine may be busy.
        java.util.concurrent.atomic.AtomicLong computed = new java.util.concurrent.atomic.AtomicLong();
        ConvertedData slow = new ConvertedData() {
            @Override public long length() { return 1 << 20; }
            @Override public long chunkBytes() { return 4; }
            @Override public List<BlobRef> blobs() { return List.of(); }
            @Override public void compute(long chunk, List<MemorySegment> blobs, MemorySegment out) {
                long until = System.nanoTime() + 20_000;
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                out.fill((byte) chunk);
                computed.incrementAndGet();
            }
            @Override public String describe() { return "slow"; }
            @Override public String kernel() { return "slow"; }
        };
        FileNode f = file(7, bytes(100), new Segment.Converted(slow));
        ReadPathWarmup.Region region = new ReadPathWarmup.Region(Path.of("h/model.safetensors"), f, "slow", 100, 1 << 20);
        int read = ReadPathWarmup.run(ref -> { throw new AssertionError("no blob to resolve"); }, List.of(region), 32L << 20,
                () -> false, System.nanoTime() + 60_000_000_000L);
        assertEquals(1, read);
        long chunks = (1 << 20) / 4;
        assertTrue(computed.get() > 0, "the region was read");
        assertTrue(computed.get() < chunks, "cut off after its 1 s, before reading the MiB once (at 20 µs a chunk, at most "
                + "50,000 of its " + chunks + " chunks fit in 1 s): " + computed.get() + " chunks computed");
        computed.set(0);
        ReadPathWarmup.run(ref -> { throw new AssertionError(); }, List.of(region), 32L << 20, () -> false, System.nanoTime());
        assertTrue(computed.get() <= (128 << 10) / 4, "a deadline already past stops it at once (one request at most): "
                + computed.get() + " chunks");
    }
}
