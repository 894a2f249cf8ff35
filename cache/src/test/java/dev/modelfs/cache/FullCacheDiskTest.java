package dev.modelfs.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cache directory's disk fails under a serving process (issue 35; SEMANTICS.md "When the cache directory's disk
 * fails"): on a small tmpfs that fills (ENOSPC), and removed outright. A write that fails leaves no chunk file, a
 * read finds none (converted again, from memory), and writes resume once there is room or the directory is back.
 */
class FullCacheDiskTest {
    private static final int LEN = 100_000;

    @TempDir
    Path tmp;

    private static byte[] bytes(long k) {
        byte[] b = new byte[LEN];
        new Random(k).nextBytes(b);
        return b;
    }

    private static String name(long k) {
        return "cd34ef-" + k;
    }

    private static boolean readBack(DiskChunkStore disk, long k) {
        MemorySegment m = Arena.ofAuto().allocate(LEN);
        boolean hit = disk.read(name(k), m);
        if (hit) {
            assertArrayEquals(bytes(k), m.toArray(ValueLayout.JAVA_BYTE), "a chunk read back is whole");
        }
        return hit;
    }

    @Test
    void aFullDiskLosesNoReadAndNoPartialChunkIsReadBackAndWritesResumeWhenSpaceReturns() throws Exception {
        Path mp = Files.createDirectories(tmp.resolve("small"));
        run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mp.toString());   // the tests run as root (./test)
        try {
            Path dir = mp.resolve("cache");
            try (DiskChunkStore disk = new DiskChunkStore(dir, 64 << 20)) {
                long k = 0;
                while (disk.write(name(k), MemorySegment.ofArray(bytes(k)))) {   // until the disk is full
                    k++;
                    assertTrue(k < 50, "a 1 MiB disk fills");
                }
                long full = k;
                assertFalse(readBack(disk, full), "the chunk that did not fit is not read back, not even in part");
                try (Stream<Path> s = Files.list(dir.resolve("tmp"))) {
                    assertEquals(0, s.count(), "no temporary left behind");
                }
                for (long j = 0; j < full; j++) {
                    assertTrue(readBack(disk, j), "chunks written before the disk filled are read back whole");
                }
                Files.delete(disk.fileOf(name(0)));                    // space returns
                Files.delete(disk.fileOf(name(1)));
                assertTrue(disk.write(name(full), MemorySegment.ofArray(bytes(full))), "writes resume");
                assertTrue(readBack(disk, full));
            }
        } finally {
            run("umount", mp.toString());
        }
    }

    @Test
    void aDiskTurnedReadOnlyLosesNoReadAndWritesResumeWhenItIsWritableAgain() throws Exception {
        Path mp = Files.createDirectories(tmp.resolve("ro"));
        run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mp.toString());
        try (DiskChunkStore disk = new DiskChunkStore(mp.resolve("cache"), 64 << 20)) {
            assertTrue(disk.write(name(0), MemorySegment.ofArray(bytes(0))));
            run("mount", "-o", "remount,ro", mp.toString());              // EROFS from now on
            assertFalse(disk.write(name(1), MemorySegment.ofArray(bytes(1))), "a read-only disk takes no chunk");
            assertFalse(readBack(disk, 1), "the chunk that was not written is a miss");
            assertTrue(readBack(disk, 0), "a chunk written before is read back whole");
            run("mount", "-o", "remount,rw", mp.toString());
            assertTrue(disk.write(name(1), MemorySegment.ofArray(bytes(1))), "writes resume");
            assertTrue(readBack(disk, 1));
            try (Stream<Path> s = Files.list(mp.resolve("cache/tmp"))) {
                assertEquals(0, s.count(), "no temporary left behind");
            }
        } finally {
            run("umount", mp.toString());
        }
    }

    @Test
    void aCacheDirectoryRemovedWhileServingIsMadeAgain() throws IOException {
        Path dir = tmp.resolve("cache");
        try (DiskChunkStore disk = new DiskChunkStore(dir, 64 << 20)) {
            assertTrue(disk.write(name(1), MemorySegment.ofArray(bytes(1))));
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
            assertFalse(Files.exists(dir));
            assertFalse(readBack(disk, 1), "a removed chunk is a miss");
            assertTrue(disk.write(name(2), MemorySegment.ofArray(bytes(2))), "the directory is made again");
            assertTrue(readBack(disk, 2));
        }
    }

    private static void run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), String.join(" ", cmd));
        assertEquals(0, p.exitValue(), String.join(" ", cmd) + ": " + out);
    }
}
