package dev.modelfs.cache;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * The record that vouches for one complete converted file of a {@code --cache-dir} (docs/FORMATS.md §11): a 24-byte
 * little-endian file {@code <name>.sum} beside it, the ASCII magic {@value #MAGIC}, the file's size (u64) and the
 * CRC32C (Castagnoli) of all its bytes (u64, upper half zero). The data file itself holds exactly the served bytes (it
 * is handed to the kernel as a passthrough backing file, so it can carry no trailer).
 *
 * <p>Invariants: {@link #verify} says VALID only when the record is well formed, its size is the data file's and the
 * expected size, and the CRC32C of every byte of the data file (read through the open descriptor that will be served)
 * matches; it reads through one native buffer of {@value #BUFFER} bytes, nothing proportional to the file on the heap.
 * Pure file I/O: no naming, no threads.
 */
final class CompleteFileRecord {
    static final String MAGIC = "MFSFILE1";
    static final int SIZE = 24;
    static final String SUFFIX = ".sum";
    /** Bytes read per {@code pread} while verifying (and written per call while assembling). */
    static final int BUFFER = 1 << 20;
    private static final long MAGIC_LONG = ByteBuffer.wrap(MAGIC.getBytes(StandardCharsets.US_ASCII)).order(ByteOrder.LITTLE_ENDIAN).getLong();

    /** What {@link #verify} found. */
    enum Verdict { VALID, NO_RECORD, SIZE, CHECKSUM }

    private CompleteFileRecord() {}

    /** Writes the record of a file of {@code size} bytes with CRC32C {@code crc} as the new file {@code record}, synced. */
    static void write(Path record, long size, long crc) throws IOException {
        try (FileChannel ch = FileChannel.open(record, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.LITTLE_ENDIAN).putLong(MAGIC_LONG).putLong(size).putLong(crc).flip();
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        }
    }

    /**
     * Checks the open data file {@code data} (its size {@code actualSize} by {@code fstat}) against its record
     * {@code record} and the size the caller serves, {@code expectedSize}.
     */
    static Verdict verify(Path record, NativeFile data, long actualSize, long expectedSize) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.LITTLE_ENDIAN);
        try (FileChannel ch = FileChannel.open(record, StandardOpenOption.READ)) {
            if (ch.size() != SIZE) {
                return Verdict.SIZE;
            }
            while (b.hasRemaining() && ch.read(b) >= 0) {
                // read the whole record
            }
        } catch (java.nio.file.NoSuchFileException e) {
            return Verdict.NO_RECORD;
        }
        if (b.hasRemaining() || b.getLong(0) != MAGIC_LONG) {
            return Verdict.CHECKSUM;
        }
        if (b.getLong(8) != expectedSize || actualSize != expectedSize) {
            return Verdict.SIZE;
        }
        return crc(data, expectedSize) == b.getLong(16) ? Verdict.VALID : Verdict.CHECKSUM;
    }

    /** The CRC32C of the first {@code size} bytes of {@code file}; -1 when it is shorter. */
    static long crc(NativeFile file, long size) throws IOException {
        CRC32C c = new CRC32C();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(BUFFER, 64);
            for (long pos = 0; pos < size; ) {
                long want = Math.min(BUFFER, size - pos);
                long n = file.pread(buf, 0, want, pos);
                if (n != want) {
                    return -1;
                }
                c.update(buf.asSlice(0, n).asByteBuffer());
                pos += n;
            }
        }
        return c.getValue();
    }

    /** Whether {@code p} names a record rather than a data file. */
    static boolean isRecord(Path p) {
        return p.getFileName().toString().endsWith(SUFFIX);
    }

    /** The record of data file {@code data}. */
    static Path recordOf(Path data) {
        return data.resolveSibling(data.getFileName() + SUFFIX);
    }

    /** Deletes data file {@code data} and its record; whether the data file was there. */
    static boolean deleteBoth(Path data) {
        boolean was = ChunkDirectory.deleteQuietly(data);
        ChunkDirectory.deleteQuietly(recordOf(data));
        return was;
    }

    /** Whether both the data file and its record are there (no verification). */
    static boolean present(Path data) {
        return Files.isRegularFile(data) && Files.isRegularFile(recordOf(data));
    }
}
