package dev.modelfs.cache;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * The file format of one converted chunk on disk ({@code --cache-dir}, docs/DESIGN.md §2.7): the chunk's bytes, then
 * a 24-byte trailer, little-endian: magic {@value #MAGIC}, the payload length, the payload's CRC32C.
 *
 * <p>Invariants: {@link #read} accepts a file only when its size is the expected length plus the trailer, the
 * trailer's magic and length match and the CRC32C of the payload matches; anything else is {@link Verdict#SIZE} or
 * {@link Verdict#CHECKSUM}, never a payload. Pure file I/O: no naming, no threads.
 */
final class ChunkFileFormat {
    static final String MAGIC = "MFSCHNK1";
    static final int TRAILER = 24;
    private static final long MAGIC_LONG = ByteBuffer.wrap(MAGIC.getBytes(StandardCharsets.US_ASCII)).order(ByteOrder.LITTLE_ENDIAN).getLong();

    /** What {@link #read} found. */
    enum Verdict { VALID, SIZE, CHECKSUM }

    private ChunkFileFormat() {}

    /**
     * Reads the chunk file {@code file} into {@code dst}, which must be exactly the payload's size.
     *
     * @throws java.nio.file.NoSuchFileException when there is no such file
     * @throws IOException when it cannot be read
     */
    static Verdict read(Path file, MemorySegment dst) throws IOException {
        long length = dst.byteSize();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            if (ch.size() != length + TRAILER || !readFully(ch, dst.asByteBuffer(), 0)) {
                return Verdict.SIZE;
            }
            ByteBuffer trailer = ByteBuffer.allocate(TRAILER).order(ByteOrder.LITTLE_ENDIAN);
            if (!readFully(ch, trailer, length)) {
                return Verdict.SIZE;
            }
            if (trailer.getLong(0) != MAGIC_LONG || trailer.getLong(8) != length || trailer.getLong(16) != crc(dst)) {
                return Verdict.CHECKSUM;
            }
        }
        return Verdict.VALID;
    }

    /** Writes {@code bytes} and their trailer as the new file {@code file} (which must not exist). */
    static void write(Path file, MemorySegment bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer trailer = ByteBuffer.allocate(TRAILER).order(ByteOrder.LITTLE_ENDIAN)
                    .putLong(MAGIC_LONG).putLong(bytes.byteSize()).putLong(crc(bytes)).flip();
            writeFully(ch, bytes.asByteBuffer());
            writeFully(ch, trailer);
        }
    }

    private static boolean readFully(FileChannel ch, ByteBuffer dst, long position) throws IOException {
        while (dst.hasRemaining()) {
            int n = ch.read(dst, position);
            if (n < 0) {
                return false;
            }
            position += n;
        }
        return true;
    }

    private static void writeFully(FileChannel ch, ByteBuffer src) throws IOException {
        while (src.hasRemaining()) {
            ch.write(src);
        }
    }

    private static long crc(MemorySegment bytes) {
        CRC32C c = new CRC32C();
        c.update(bytes.asByteBuffer());
        return c.getValue();
    }
}
