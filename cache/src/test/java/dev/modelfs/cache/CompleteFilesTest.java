package dev.modelfs.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Complete files of a cache directory ({@link CompleteFiles}, {@link CompleteFileRecord}): an assembled file holds
 * exactly its content and is served only while its record vouches for every byte; a flipped byte, a truncation or a
 * record of another size is refused and both files deleted; a file whose identity is its record's is trusted without
 * being read, also after a restart, and one whose identity changed (any write, a touch) or whose record is of version
 * 1 is read whole once and its record rewritten; a file without its record is not served and not deleted; content of
 * the wrong length installs nothing; the size bound trims complete files like chunks but never one in use.
 */
class CompleteFilesTest {
    private static final int MIB = 1 << 20;

    @TempDir
    Path dir;

    private static String name(char c) {
        return String.valueOf(c).repeat(64).replace('x', 'e');
    }

    /** Pseudo-random bytes, written 100,000 at a time (not a multiple of anything the file system aligns to). */
    private static byte[] content(long seed, int size) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static boolean assemble(CompleteFiles files, String name, byte[] bytes, long declared) {
        return files.assemble(name, declared, sink -> {
            for (int at = 0; at < bytes.length; at += 100_000) {
                sink.write(MemorySegment.ofArray(bytes).asSlice(at, Math.min(100_000, bytes.length - at)));
            }
        });
    }

    private static byte[] readAll(NativeFile f, int size) throws IOException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(size);
            assertEquals(size, f.pread(buf, 0, size, 0));
            return buf.toArray(ValueLayout.JAVA_BYTE);
        }
    }

    @Test
    void anAssembledFileIsServedWithExactlyItsBytes() throws Exception {
        try (DiskChunkStore disk = new DiskChunkStore(dir, 64L * MIB)) {
            CompleteFiles files = disk.completeFiles();
            byte[] bytes = content(1, 2 * MIB + 12_345);
            String n = name('a');
            assertFalse(files.present(n));
            assertTrue(assemble(files, n, bytes, bytes.length));
            assertTrue(files.present(n));
            assertEquals(bytes.length, Files.size(files.fileOf(n)), "the data file is the bytes alone, no trailer");
            for (int round = 0; round < 2; round++) {        // the second open is not verified again, same answer
                try (NativeFile f = files.open(n, bytes.length)) {
                    assertArrayEquals(bytes, readAll(f, bytes.length));
                }
            }
            assertEquals(2, files.served());
            assertEquals(1, files.assembled());
            try (Stream<Path> tmp = Files.list(dir.resolve("tmp"))) {
                assertEquals(0, tmp.count(), "no temporary left");
            }
        }
    }

    @Test
    void anUnchangedFileIsTrustedWithoutReadingAfterARestartAndAChangedOneIsVerifiedOnce() throws Exception {
        byte[] bytes = content(8, MIB + 77);
        String n = name('9');
        Path data;
        try (DiskChunkStore disk = new DiskChunkStore(dir, 64L * MIB)) {
            assertTrue(assemble(disk.completeFiles(), n, bytes, bytes.length));
            data = disk.completeFiles().fileOf(n);
        }
        Path record = CompleteFileRecord.recordOf(data);
        assertEquals(CompleteFileRecord.SIZE, Files.size(record));
        try (DiskChunkStore restarted = new DiskChunkStore(dir, 64L * MIB)) {
            CompleteFiles files = restarted.completeFiles();
            try (NativeFile f = files.open(n, bytes.length)) {
                assertArrayEquals(bytes, readAll(f, bytes.length));
            }
            assertEquals(0, files.verified(), "its identity is the record's: trusted without reading it");
            assertEquals(1, files.served());

            byte[] before = Files.readAllBytes(record);
            Files.setLastModifiedTime(data, FileTime.fromMillis(System.currentTimeMillis() - 60_000));   // a touch
            try (NativeFile f = files.open(n, bytes.length)) {
                assertArrayEquals(bytes, readAll(f, bytes.length));
            }
            assertEquals(1, files.verified(), "changed identity: read whole, its checksum matches");
            assertFalse(java.util.Arrays.equals(before, Files.readAllBytes(record)), "the record now holds the new identity");
            try (NativeFile f = files.open(n, bytes.length)) {
                assertEquals(bytes.length, f.stat().size());
            }
            assertEquals(1, files.verified(), "trusted again");
            assertEquals(0, files.rejected());
        }
    }

    @Test
    void aRecordOfVersionOneIsVerifiedNotTrustedAndRewritten() throws Exception {
        byte[] bytes = content(9, 300_001);
        String n = name('8');
        try (DiskChunkStore disk = new DiskChunkStore(dir, 64L * MIB)) {
            CompleteFiles files = disk.completeFiles();
            assertTrue(assemble(files, n, bytes, bytes.length));
            Path data = files.fileOf(n);
            Path record = CompleteFileRecord.recordOf(data);
            var v1 = java.nio.ByteBuffer.allocate(CompleteFileRecord.SIZE_V1).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                    .put(CompleteFileRecord.MAGIC_V1.getBytes(java.nio.charset.StandardCharsets.US_ASCII))
                    .putLong(bytes.length).putLong(crc(bytes));
            Files.write(record, v1.array());
            try (NativeFile f = files.open(n, bytes.length)) {
                assertArrayEquals(bytes, readAll(f, bytes.length));
            }
            assertEquals(1, files.verified(), "a version 1 record has no identity: the file is read whole");
            assertEquals(CompleteFileRecord.SIZE, Files.size(record), "rewritten as version 2");
            files.open(n, bytes.length).close();
            assertEquals(1, files.verified());

            Files.write(record, v1.putLong(16, crc(bytes) ^ 1).array());     // a version 1 record that does not match
            assertThrows(NoSuchFileException.class, () -> files.open(n, bytes.length).close());
            assertFalse(Files.exists(data));
            assertEquals(1, files.rejected());
        }
    }

    private static long crc(byte[] b) {
        java.util.zip.CRC32C c = new java.util.zip.CRC32C();
        c.update(b);
        return c.getValue();
    }

    @Test
    void aFlippedByteATruncationOrAnotherSizeIsRefusedAndDeleted() throws Exception {
        try (DiskChunkStore disk = new DiskChunkStore(dir, 64L * MIB)) {
            CompleteFiles files = disk.completeFiles();
            byte[] bytes = content(2, MIB + 3);
            for (int kind = 0; kind < 3; kind++) {
                String n = name((char) ('b' + kind));
                assertTrue(assemble(files, n, bytes, bytes.length));
                Path data = files.fileOf(n);
                long expected = bytes.length;
                switch (kind) {
                    case 0 -> {                                  // same size, one bit changed, mtime kept (ctime moves)
                        FileTime t = Files.getLastModifiedTime(data);
                        byte[] b = Files.readAllBytes(data);
                        b[b.length / 2] ^= 0x10;
                        Files.write(data, b);
                        Files.setLastModifiedTime(data, t);
                    }
                    case 1 -> {
                        try (FileChannel ch = FileChannel.open(data, StandardOpenOption.WRITE)) {
                            ch.truncate(ch.size() - 1);
                        }
                    }
                    default -> expected = bytes.length + 1;     // the file now served is one byte longer
                }
                long size = expected;
                assertThrows(NoSuchFileException.class, () -> files.open(n, size).close());
                assertFalse(Files.exists(data), "kind " + kind + ": data deleted");
                assertFalse(Files.exists(CompleteFileRecord.recordOf(data)), "kind " + kind + ": record deleted");
            }
            assertEquals(3, files.rejected());
            assertEquals(0, files.served());
        }
    }

    @Test
    void aFileWithoutItsRecordIsNeitherServedNorDeleted() throws Exception {
        try (DiskChunkStore disk = new DiskChunkStore(dir, 64L * MIB)) {
            CompleteFiles files = disk.completeFiles();
            byte[] bytes = content(3, 5000);
            String n = name('f');
            assertTrue(assemble(files, n, bytes, bytes.length));
            Files.delete(CompleteFileRecord.recordOf(files.fileOf(n)));
            assertFalse(files.present(n));
            assertThrows(NoSuchFileException.class, () -> files.open(n, bytes.length).close());
            assertTrue(Files.exists(files.fileOf(n)), "maybe another process's install in progress");
            assertEquals(0, files.rejected());
        }
    }

    @Test
    void contentOfTheWrongLengthInstallsNothing() throws Exception {
        try (DiskChunkStore disk = new DiskChunkStore(dir, 64L * MIB)) {
            CompleteFiles files = disk.completeFiles();
            byte[] bytes = content(4, 300_000);
            String n = name('0');
            assertFalse(assemble(files, n, bytes, bytes.length + 1));
            assertFalse(files.present(n));
            assertFalse(Files.exists(files.fileOf(n)));
            assertFalse(files.assemble(n, 10, sink -> {
                throw new IOException("a chunk could not be read");
            }));
            assertFalse(Files.exists(files.fileOf(n)));
            try (Stream<Path> tmp = Files.list(dir.resolve("tmp"))) {
                assertEquals(0, tmp.count(), "no temporary left");
            }
        }
    }

    @Test
    void theSizeBoundTrimsTheLeastRecentlyUsedCompleteFileButNeverOneInUse() throws Exception {
        try (DiskChunkStore disk = new DiskChunkStore(dir, 5L * MIB / 2)) {
            CompleteFiles files = disk.completeFiles();
            String a = name('1');
            String b = name('2');
            String c = name('3');
            assertTrue(assemble(files, a, content(5, MIB), MIB));
            files.acquire(a);                                  // an open file serves from it
            assertTrue(assemble(files, b, content(6, MIB), MIB));
            FileTime old = FileTime.fromMillis(System.currentTimeMillis() - 3_600_000);
            Files.setLastModifiedTime(CompleteFileRecord.recordOf(files.fileOf(a)), old);   // a is the oldest, b next
            Files.setLastModifiedTime(CompleteFileRecord.recordOf(files.fileOf(b)), FileTime.fromMillis(old.toMillis() + 1000));
            assertTrue(assemble(files, c, content(7, MIB), MIB));   // 3 MiB > 2.5: trimmed to 2.25
            assertTrue(files.present(a), "in use: kept though the oldest");
            assertFalse(files.present(b), "the least recently used one not in use: trimmed");
            assertFalse(Files.exists(files.fileOf(b)));
            assertTrue(files.present(c));
            files.release(a);
            Files.setLastModifiedTime(CompleteFileRecord.recordOf(files.fileOf(a)), old);
            assertTrue(assemble(files, b, content(6, MIB), MIB));
            assertFalse(files.present(a), "released: trimmed like any other");
            assertTrue(files.present(b) && files.present(c));
        }
    }
}
