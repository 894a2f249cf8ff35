package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Small reads (docs/DESIGN.md §3.1: a FUSE {@code READ} of under 8 KiB is answered by the worker that received it,
 * without libfuse): {@code O_DIRECT} opens make the kernel send each 4 KiB read as it is, so every such read here is
 * one small {@code READ}. A whole-blob file gives the blob's bytes (the blob on disk is the oracle), a reassembled and
 * a converted file give the bytes of their large reads (libfuse's path, whose bytes the format tests hold to
 * safetensors, gguf-py and numpy), a read across the end is short and one past it empty, four readers at once each
 * get their own bytes (also when the blob's pages are not in the page cache, so that reads wait for the disk), and a
 * blob truncated under an open file fails the reads past its new end with EIO while the
 * mount carries on.
 */
class SmallReadsTest {
    private static final int BLOCK = 4096;

    @TempDir
    Path tmp;

    @Test
    void directFourKibReadsGiveTheSameBytesAsLargeReadsForEveryKindOfFile() throws Exception {
        Path store = Fixture.store();
        try (CliMount m = CliMount.start(store, tmp.resolve("mnt"), "--no-warmup")) {
            Path whole = m.mountpoint.resolve("tinyllama/model.gguf");
            byte[] blobBytes = Files.readAllBytes(blobNamedBy(store, Files.readAllBytes(whole)));
            assertDirectReadsMatch(whole, blobBytes);
            for (String f : new String[] {"tiny-st/model.safetensors", "tinyllama/model.fp32.gguf"}) {
                Path p = m.mountpoint.resolve(f);
                assertDirectReadsMatch(p, Files.readAllBytes(p));
            }
        }
    }

    @Test
    void fourDirectReadersAtOnceEachGetTheirOwnBytes() throws Exception {
        Path store = tmp.resolve("store");
        byte[] blob = new byte[(3 << 20) + 1234];
        new Random(7).nextBytes(blob);
        SmallStore.addModel(store, "rand", blob);
        try (CliMount m = CliMount.start(store, tmp.resolve("mnt"), "--no-warmup")) {
            assertReadersGetTheirBytes(m.mountpoint.resolve("rand/model.gguf"), blob, 4);
        }
    }

    @Test
    void readsOfPagesThatAreNotInMemoryWaitForTheDiskAndStillGiveTheBlobsBytes() throws Exception {
        Path store = tmp.resolve("store");
        byte[] blob = new byte[(8 << 20) + 77];
        new Random(9).nextBytes(blob);
        Path blobFile = SmallStore.addModel(store, "cold", blob);
        try (CliMount m = CliMount.start(store, tmp.resolve("mnt"), "--no-warmup", "--threads", "2")) {
            try (FileChannel ch = FileChannel.open(blobFile, StandardOpenOption.READ)) {
                ch.force(true);                                 // clean pages, which the kernel can drop
            }
            int fd = PageCache.open(blobFile);
            assertTrue(fd >= 0, "open " + blobFile + ": " + PageCache.name(-fd));
            try {
                PageCache.drop(fd);                             // posix_fadvise(POSIX_FADV_DONTNEED); throws if it fails
            } finally {
                PageCache.close(fd);
            }
            try (FileChannel ch = FileChannel.open(blobFile, StandardOpenOption.READ)) {
                assertFalse(ch.map(FileChannel.MapMode.READ_ONLY, 0, blob.length).isLoaded(),
                        "some of the blob's pages are out of the page cache (mincore)");
            }
            assertReadersGetTheirBytes(m.mountpoint.resolve("cold/model.gguf"), blob, 4);
        }
    }

    /** {@code readers} threads each make 2,000 {@code O_DIRECT} 4 KiB reads of {@code file} at random and check them against {@code blob}. */
    private static void assertReadersGetTheirBytes(Path file, byte[] blob, int readers) throws InterruptedException {
        ConcurrentLinkedQueue<String> bad = new ConcurrentLinkedQueue<>();
        Thread[] threads = new Thread[readers];
        for (int r = 0; r < threads.length; r++) {
            long seed = r;
            threads[r] = new Thread(() -> {
                Random rnd = new Random(seed);
                ByteBuffer buf = ByteBuffer.allocateDirect(2 * BLOCK).alignedSlice(BLOCK).limit(BLOCK);
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, ExtendedOpenOption.DIRECT)) {
                    for (int k = 0; k < 2000; k++) {
                        long off = (long) rnd.nextInt(blob.length / BLOCK + 1) * BLOCK;
                        String why = check(ch, buf, off, blob);
                        if (why != null) {
                            bad.add(why);
                        }
                    }
                } catch (IOException e) {
                    bad.add(e.toString());
                }
            });
            threads[r].start();
        }
        for (Thread t : threads) {
            t.join(120_000);
            assertTrue(!t.isAlive(), "a reader hangs");
        }
        assertTrue(bad.isEmpty(), bad.size() + " bad reads, e.g. " + bad.peek());
    }

    @Test
    void aBlobTruncatedUnderAnOpenFileFailsTheSmallReadsPastItsEndWithEio() throws Exception {
        Path store = tmp.resolve("store");
        byte[] blob = new byte[1 << 20];
        new Random(11).nextBytes(blob);
        Path blobFile = SmallStore.addModel(store, "cut", blob);
        byte[] other = new byte[1 << 20];
        new Random(12).nextBytes(other);
        SmallStore.addModel(store, "intact", other);
        try (CliMount m = CliMount.start(store, tmp.resolve("mnt"), "--no-warmup");
             FileChannel ch = FileChannel.open(m.mountpoint.resolve("cut/model.gguf"), StandardOpenOption.READ,
                     ExtendedOpenOption.DIRECT)) {
            ByteBuffer buf = ByteBuffer.allocateDirect(2 * BLOCK).alignedSlice(BLOCK).limit(BLOCK);
            assertEquals(null, check(ch, buf, 200 * BLOCK, blob), "before the truncation");
            try (FileChannel w = FileChannel.open(blobFile, StandardOpenOption.WRITE)) {
                w.truncate(blob.length / 2);
            }
            assertEquals(null, check(ch, buf, 10 * BLOCK, blob), "a block before the new end still reads");
            buf.clear().limit(BLOCK);
            IOException e = assertThrows(IOException.class, () -> ch.read(buf, 200L * BLOCK));
            assertEquals("EIO", HostileStoreTest.errnoOf(e), e.toString());
            assertArrayEquals(other, Files.readAllBytes(m.mountpoint.resolve("intact/model.gguf")), "the mount carries on");
            assertTrue(m.log().contains("cut"), "the failure is logged with its file:\n" + m.log());
        }
    }

    /** Reads {@code p} with {@code O_DIRECT} in 4 KiB blocks (every block of a small file, else 300 of them) against {@code expected}. */
    static void assertDirectReadsMatch(Path p, byte[] expected) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(2 * BLOCK).alignedSlice(BLOCK).limit(BLOCK);
        long blocks = (expected.length + BLOCK - 1) / BLOCK;
        Random rnd = new Random(p.toString().hashCode());
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, ExtendedOpenOption.DIRECT)) {
            for (long b = 0; b < Math.min(blocks, 300); b++) {
                long block = blocks <= 300 ? b : b == 0 ? blocks - 1 : rnd.nextLong(blocks);
                String why = check(ch, buf, block * BLOCK, expected);
                assertEquals(null, why, p.toString());
            }
            buf.clear().limit(BLOCK);
            assertEquals(-1, ch.read(buf, blocks * BLOCK), p + ": a read past the end");
        }
    }

    /** One {@code O_DIRECT} read of a block at {@code off}: null when it gives {@code expected}'s bytes (short at the end), else why not. */
    private static String check(FileChannel ch, ByteBuffer buf, long off, byte[] expected) throws IOException {
        buf.clear().limit(BLOCK);
        int n = ch.read(buf, off);
        int want = (int) Math.min(BLOCK, expected.length - off);
        if (n != want) {
            return "read at " + off + " gave " + n + " bytes, not " + want;
        }
        byte[] got = new byte[n];
        buf.flip().get(got);
        if (!Arrays.equals(got, Arrays.copyOfRange(expected, (int) off, (int) off + n))) {
            return "read at " + off + " gave other bytes";
        }
        return null;
    }

    /** The blob {@code bytes} are: {@code blobs/sha256-<hex>} of the store (an oracle independent of modelfs). */
    private static Path blobNamedBy(Path store, byte[] bytes) throws Exception {
        Path p = store.resolve("blobs/sha256-" + HostileStoreTest.sha256(bytes));
        assertTrue(Files.exists(p), p + " does not exist");
        return p;
    }
}
