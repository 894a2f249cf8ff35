package dev.modelfs.cache;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;
import java.util.zip.CRC32C;

/**
 * Complete converted files of a {@code --cache-dir} (docs/DESIGN.md §2.7 "Complete files"): file {@code name} (a
 * 64-hex name the caller derives from what the bytes are, never a path) is {@code DIR/files/<name[0..2]>/<name>},
 * exactly the bytes a mount serves for it, with its {@link CompleteFileRecord} ({@code <name>.sum}: size, CRC32C and
 * the identity of the file they were taken of) beside it. A front end serves such a file by handing its descriptor to
 * the kernel (FUSE passthrough) or by {@code pread}/{@code splice} of it, as a blob.
 *
 * <p>Invariants: a data file and its record are only ever written under {@code DIR/tmp/}, synced ({@code fsync}) and
 * renamed into place, data first (the record holds the identity the data file has after its rename); {@link #open}
 * hands out a descriptor only of a file whose record matches its size and the expected size and that the record
 * trusts: the file's identity by {@code fstat} of that very descriptor (device, inode, size, mtime, ctime) is the
 * one the record's CRC32C was taken of, or else the CRC32C of all its bytes, read through that descriptor, matches
 * (then the record is rewritten with the identity now: {@link CompleteFileRecord#check}). So an unchanged file is
 * never read to be opened, in this process or after a restart, and a changed one is read once. A file whose record
 * contradicts it is deleted with its record (a torn or corrupt file is never served); a data file without a record is
 * an install in progress or a crashed one, not served and not deleted here (the size bound ages it out). Files count
 * toward the directory's bound with the chunks ({@link ChunkDirectory}); a file {@link #acquire acquired} by an open
 * file is never trimmed; a hit refreshes the record's mtime (the LRU order), never the data file's.
 */
public final class CompleteFiles {
    private static final Logger LOG = Logger.getLogger(CompleteFiles.class.getName());

    /** The bytes of a file being assembled, written in order into a {@link Sink}. */
    @FunctionalInterface
    public interface Content {
        void writeTo(Sink sink) throws IOException;
    }

    /** Where {@link Content} writes: the next bytes of the file. */
    @FunctionalInterface
    public interface Sink {
        void write(MemorySegment bytes) throws IOException;
    }

    private final ChunkDirectory directory;
    private final Runnable trim;
    private final Map<String, Integer> inUse = new ConcurrentHashMap<>();
    private final LongAdder served = new LongAdder();
    private final LongAdder assembled = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    private final LongAdder verified = new LongAdder();

    /** Files of {@code directory}; {@code trim} is called when an assembled file takes it past its bound. */
    CompleteFiles(ChunkDirectory directory, Runnable trim) {
        this.directory = directory;
        this.trim = trim;
    }

    /** The data file of complete file {@code name}. */
    public Path fileOf(String name) {
        return directory.completeFileOf(name);
    }

    /** Whether file {@code name} and its record are on disk (not verified: {@link #open} does that). */
    public boolean present(String name) {
        return CompleteFileRecord.present(fileOf(name));
    }

    /**
     * Opens complete file {@code name} of {@code size} bytes, trusted by its record ({@link CompleteFileRecord#check}:
     * read whole only when its identity is not the record's).
     *
     * @throws NoSuchFileException when there is none, or none that is complete and intact (then it was deleted)
     * @throws IOException         when it cannot be read, or changed while it was verified
     */
    public NativeFile open(String name, long size) throws IOException {
        Path data = fileOf(name);
        NativeFile f = NativeFile.openRegular(data, data.getParent(), -1);
        try {
            Path record = CompleteFileRecord.recordOf(data);
            CompleteFileRecord.Verdict v = CompleteFileRecord.check(record, directory.temporaryFor(name + "-sum"), f, size);
            if (v == CompleteFileRecord.Verdict.NO_RECORD) {
                throw new NoSuchFileException(data.toString(), null, "no record (being installed)");
            }
            if (!v.valid()) {
                rejected.increment();
                CompleteFileRecord.deleteBoth(data);
                LOG.warning("complete file " + data + " is invalid (" + v.name().toLowerCase(java.util.Locale.ROOT)
                        + "): deleted, served from chunks and assembled again");
                throw new NoSuchFileException(data.toString(), null, "invalid: " + v);
            }
            if (v == CompleteFileRecord.Verdict.VERIFIED) {
                verified.increment();
                LOG.fine("complete file " + data + " changed since its record (or has a record of version 1): its checksum"
                        + " matches, record rewritten");
            }
            ChunkDirectory.touch(record);
            served.increment();
            return f;
        } catch (IOException | RuntimeException e) {
            f.close();
            throw e;
        }
    }

    /** Marks file {@code name} as used by an open file: the size bound never removes it until {@link #release}. */
    public void acquire(String name) {
        inUse.merge(name, 1, Integer::sum);
    }

    /** Undoes one {@link #acquire}. */
    public void release(String name) {
        inUse.computeIfPresent(name, (k, n) -> n == 1 ? null : n - 1);
    }

    /** Whether the file named {@code fileName} (a data file's or record's name) is used by an open file. */
    boolean inUse(String fileName) {
        String name = fileName.endsWith(CompleteFileRecord.SUFFIX)
                ? fileName.substring(0, fileName.length() - CompleteFileRecord.SUFFIX.length()) : fileName;
        return inUse.containsKey(name);
    }

    /**
     * Writes file {@code name} of {@code size} bytes from {@code content} (temporary files, {@code fsync}, data and
     * record renamed into place) and returns whether it was installed. Content of another length than {@code size},
     * or content that fails, installs nothing; one log line per failure.
     */
    public boolean assemble(String name, long size, Content content) {
        return assemble(name, size, content, () -> { });
    }

    /**
     * Like {@link #assemble(String, long, Content)}; {@code installed} runs once the file is in place, before it is
     * counted against the bound (and the directory maybe trimmed): what it makes less recently used is trimmed first.
     */
    public boolean assemble(String name, long size, Content content, Runnable installed) {
        Path data = fileOf(name);
        Path t = directory.temporaryFor(name);
        Path tr = directory.temporaryFor(name + "-sum");
        try {
            CRC32C crc = new CRC32C();
            long[] written = {0};
            try (FileChannel ch = FileChannel.open(t, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                content.writeTo(bytes -> {
                    var b = bytes.asByteBuffer();
                    crc.update(b.duplicate());
                    while (b.hasRemaining()) {
                        ch.write(b);
                    }
                    written[0] += bytes.byteSize();
                });
                if (written[0] != size) {
                    throw new IOException("content was " + written[0] + " bytes, not " + size);
                }
                ch.force(true);
            }
            Files.createDirectories(data.getParent());
            Path record = CompleteFileRecord.recordOf(data);
            ChunkDirectory.deleteQuietly(record);           // a record never vouches for another data file than its own
            Files.move(t, data, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            CompleteFileRecord.write(record, tr, data, size, crc.getValue());
            assembled.increment();
            installed.run();
            if (directory.account(size + CompleteFileRecord.SIZE)) {
                trim.run();
            }
            return true;
        } catch (java.io.InterruptedIOException e) {
            return false;                                       // the process is stopping: nothing installed
        } catch (IOException | UncheckedIOException e) {
            LOG.warning("cannot assemble complete file " + data + ": " + e + " (it is served from chunks)");
            return false;
        } finally {
            ChunkDirectory.deleteQuietly(t);
            ChunkDirectory.deleteQuietly(tr);
        }
    }

    /** Opens of complete files served (verified). */
    public long served() {
        return served.sum();
    }

    /** Complete files written by this process. */
    public long assembled() {
        return assembled.sum();
    }

    /** Complete files read whole to be opened: their identity was not their record's (changed, or a version 1 record). */
    public long verified() {
        return verified.sum();
    }

    /** Complete files found invalid (record, size or checksum) and deleted. */
    public long rejected() {
        return rejected.sum();
    }
}
