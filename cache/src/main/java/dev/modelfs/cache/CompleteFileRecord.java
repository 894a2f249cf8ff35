package dev.modelfs.cache;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * The record that vouches for one complete converted file of a {@code --cache-dir} (docs/FORMATS.md §11): a 56-byte
 * little-endian file {@code <name>.sum} beside it, the ASCII magic {@value #MAGIC}, the file's size (u64), the CRC32C
 * (Castagnoli) of all its bytes (u64, upper half zero) and the {@link Identity} of the data file whose bytes had that
 * CRC (device, inode, size, mtime and ctime in ns). The data file itself holds exactly the served bytes (it is handed
 * to the kernel as a passthrough backing file, so it can carry no trailer). A record of the first version
 * ({@value #MAGIC_V1}, 24 bytes, no identity) is read but never trusted: its file is verified and the record
 * rewritten in this version.
 *
 * <p>The trust rule ({@link #check}): a well-formed record whose size is the data file's and the expected size
 * trusts the data file without reading it when the file's identity, by {@code fstat} of the descriptor that will be
 * served, is the record's (no byte of it can have changed since its CRC32C was taken: any write moves its ctime);
 * otherwise the CRC32C of every byte, read through that descriptor, must match, and then the record is rewritten
 * with the file's identity as it is now. Reads go through one native buffer of {@value #BUFFER} bytes, nothing
 * proportional to the file on the heap. Pure file I/O: no naming, no threads.
 */
final class CompleteFileRecord {
    static final String MAGIC = "MFSFILE2";
    static final String MAGIC_V1 = "MFSFILE1";
    static final int SIZE = 56;
    static final int SIZE_V1 = 24;
    static final String SUFFIX = ".sum";
    /** Bytes read per {@code pread} while verifying (and written per call while assembling). */
    static final int BUFFER = 1 << 20;
    /** How long writing a record waits at most for the file system's clock to pass the data file's ctime. */
    static final long CLOCK_WAIT_MILLIS = 2_000;
    private static final long MAGIC_LONG = magic(MAGIC);
    private static final long MAGIC_V1_LONG = magic(MAGIC_V1);

    /** What {@link #check} found: trusted by identity, verified by reading, or not to be served. */
    enum Verdict {
        TRUSTED, VERIFIED, NO_RECORD, SIZE, CHECKSUM;

        boolean valid() {
            return this == TRUSTED || this == VERIFIED;
        }
    }

    /** Which file held the bytes a record's CRC32C was taken of; it can only be the same file with the same bytes. */
    record Identity(long dev, long ino, long size, long mtimeNanos, long ctimeNanos) {
        static Identity of(NativeFile.Stat st) {
            return new Identity(st.dev(), st.ino(), st.size(), st.mtimeNanos(), st.ctimeNanos());
        }
    }

    /** A record as read: the size and CRC32C it vouches for, and the identity it was taken of (null: version 1). */
    record Contents(long size, long crc, Identity identity) {}

    private CompleteFileRecord() {}

    private static long magic(String m) {
        return ByteBuffer.wrap(m.getBytes(StandardCharsets.US_ASCII)).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    /**
     * Writes the record of data file {@code data} ({@code size} bytes, CRC32C {@code crc}) as {@code record}, with
     * {@code data}'s identity by {@code stat} after its last rename (which moves its ctime): see {@link #write(Path, Path,
     * long, long, Identity, IOSupplier)}.
     */
    static void write(Path record, Path temporary, Path data, long size, long crc) throws IOException {
        write(record, temporary, size, crc, Identity.of(NativeFile.stat(data)), () -> NativeFile.stat(data));
    }

    /** A {@code stat} that may fail. */
    @FunctionalInterface
    interface IOSupplier {
        NativeFile.Stat get() throws IOException;
    }

    /**
     * Writes the record as the new file {@code temporary}, synced, then renamed over {@code record}. The identity is
     * {@code id}, the data file's when its CRC32C was taken, and the record is written only once the file system's clock has moved past the data file's
     * ctime (the temporary's own ctime, after a write, is later: waiting a millisecond at a time, at most
     * {@value #CLOCK_WAIT_MILLIS} ms) and the data file's identity ({@code dataStat}) is still {@code id} then: timestamps are
     * coarse (a clock tick), and a write in the tick of the last change would otherwise leave the identity as it was
     * (the problem git's index calls "racily clean").
     *
     * @throws IOException when the data file changed meanwhile, or the clock did not move (nothing written)
     */
    static void write(Path record, Path temporary, long size, long crc, Identity id, IOSupplier dataStat) throws IOException {
        try {
            ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.LITTLE_ENDIAN).putLong(MAGIC_LONG).putLong(size).putLong(crc)
                    .putLong(id.dev()).putLong(id.ino()).putLong(id.mtimeNanos()).putLong(id.ctimeNanos()).flip();
            try (FileChannel ch = FileChannel.open(temporary, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                for (long waited = 0; ; waited++) {
                    ByteBuffer w = b.duplicate();
                    for (long at = 0; w.hasRemaining(); ) {
                        at += ch.write(w, at);
                    }
                    if (NativeFile.stat(temporary).ctimeNanos() > id.ctimeNanos()) {
                        break;
                    }
                    if (waited >= CLOCK_WAIT_MILLIS) {
                        throw new IOException("the file system's clock did not pass the data file's ctime within "
                                + CLOCK_WAIT_MILLIS + " ms");
                    }
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new java.io.InterruptedIOException("stopping");
                    }
                }
                ch.force(true);
            }
            if (!Identity.of(dataStat.get()).equals(id)) {
                throw new IOException("the data file changed while its record was written");
            }
            Files.move(temporary, record, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            ChunkDirectory.deleteQuietly(temporary);
        }
    }

    /**
     * Reads {@code record}: its contents, or null when it is no record of either version (wrong length or magic).
     *
     * @throws NoSuchFileException when there is none
     */
    static Contents read(Path record) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.LITTLE_ENDIAN);
        try (FileChannel ch = FileChannel.open(record, StandardOpenOption.READ)) {
            long length = ch.size();
            if (length != SIZE && length != SIZE_V1) {
                return null;
            }
            b.limit((int) length);
            while (b.hasRemaining() && ch.read(b) >= 0) {
                // read the whole record
            }
            if (b.hasRemaining()) {
                return null;
            }
        }
        long magic = b.getLong(0);
        if (b.limit() == SIZE && magic == MAGIC_LONG) {
            return new Contents(b.getLong(8), b.getLong(16),
                    new Identity(b.getLong(24), b.getLong(32), b.getLong(8), b.getLong(40), b.getLong(48)));
        }
        return b.limit() == SIZE_V1 && magic == MAGIC_V1_LONG ? new Contents(b.getLong(8), b.getLong(16), null) : null;
    }

    /**
     * Checks the open data file {@code data} against its record {@code record} and the size the caller serves,
     * {@code expectedSize}, by the trust rule above; after a VERIFIED, the record has been rewritten (through
     * {@code temporary}) with the identity {@code data} has now.
     *
     * @throws IOException when it cannot be read, or it changed while its checksum was read (not to be served; nothing
     *                     deleted: the next open checks it again)
     */
    static Verdict check(Path record, Path temporary, NativeFile data, long expectedSize) throws IOException {
        Contents c;
        try {
            c = read(record);
        } catch (NoSuchFileException e) {
            return Verdict.NO_RECORD;
        }
        if (c == null) {
            return Verdict.CHECKSUM;
        }
        NativeFile.Stat before = data.stat();
        if (c.size() != expectedSize || before.size() != expectedSize) {
            return Verdict.SIZE;
        }
        Identity now = Identity.of(before);
        if (now.equals(c.identity())) {
            return Verdict.TRUSTED;
        }
        if (crc(data, expectedSize) != c.crc()) {
            return Verdict.CHECKSUM;
        }
        if (!Identity.of(data.stat()).equals(now)) {
            throw new IOException(data.path() + " changed while its checksum was read");
        }
        try {
            write(record, temporary, expectedSize, c.crc(), now, data::stat);
        } catch (IOException e) {
            throw new IOException(data.path() + ": " + e.getMessage(), e);
        }
        return Verdict.VERIFIED;
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
