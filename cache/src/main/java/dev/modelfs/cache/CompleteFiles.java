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
import java.nio.file.attribute.FileTime;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;
import java.util.zip.CRC32C;

/**
 * Complete converted files of a {@code --cache-dir} (docs/DESIGN.md §2.7 "Complete files"): file {@code name} (a
 * 64-hex name the caller derives from what the bytes are, never a path) is {@code DIR/files/<name[0..2]>/<name>},
 * exactly the bytes a mount serves for it, with its {@link CompleteFileRecord} ({@code <name>.sum}: size and CRC32C)
 * beside it. A front end serves such a file by handing its descriptor to the kernel (FUSE passthrough) or by
 * {@code pread}/{@code splice} of it, as a blob.
 *
 * <p>Invariants: a data file and its record are only ever written under {@code DIR/tmp/}, synced ({@code fsync}) and
 * renamed into place, data first; {@link #open} hands out a descriptor only of a file whose record matches its size,
 * the expected size and the CRC32C of all its bytes, read through that very descriptor (verified once per file
 * identity, device, inode, size and mtime, in this process: a later open of the same unchanged file is not read
 * again), and deletes a file whose record contradicts it (a torn or corrupt file is never served); a data file
 * without a record is an install in progress or a crashed one, not served and not deleted here (the size bound ages
 * it out). Files count toward the directory's bound with the chunks ({@link ChunkDirectory}); a file {@link #acquire
 * acquired} by an open file is never trimmed; a hit refreshes the record's mtime (the LRU order), never the data
 * file's (which would make it look changed).
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

    /** A file verified in this process: its identity as it was then. */
    private record Verified(Object key, long size, FileTime mtime) {}

    private final ChunkDirectory directory;
    private final Runnable trim;
    private final Map<String, Verified> verified = new ConcurrentHashMap<>();
    private final Map<String, Integer> inUse = new ConcurrentHashMap<>();
    private final LongAdder served = new LongAdder();
    private final LongAdder assembled = new LongAdder();
    private final LongAdder rejected = new LongAdder();

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
     * Opens complete file {@code name} of {@code size} bytes, verified ({@link CompleteFileRecord#verify}, once per
     * unchanged file in this process).
     *
     * @throws NoSuchFileException when there is none, or none that is complete and intact (then it was deleted)
     * @throws IOException         when it cannot be read
     */
    public NativeFile open(String name, long size) throws IOException {
        Path data = fileOf(name);
        NativeFile f = NativeFile.openRegular(data, data.getParent(), -1);
        try {
            NativeFile.Stat st = f.stat();
            var attrs = Files.readAttributes(data, java.nio.file.attribute.BasicFileAttributes.class);
            Verified now = new Verified(st.dev() + ":" + st.ino(), st.size(), attrs.lastModifiedTime());
            if (!now.equals(verified.get(name))) {
                CompleteFileRecord.Verdict v = CompleteFileRecord.verify(CompleteFileRecord.recordOf(data), f, st.size(), size);
                if (v == CompleteFileRecord.Verdict.NO_RECORD) {
                    throw new NoSuchFileException(data.toString(), null, "no record (being installed)");
                }
                if (v != CompleteFileRecord.Verdict.VALID) {
                    rejected.increment();
                    verified.remove(name);
                    CompleteFileRecord.deleteBoth(data);
                    LOG.warning("complete file " + data + " is invalid (" + v.name().toLowerCase(java.util.Locale.ROOT)
                            + "): deleted, served from chunks and assembled again");
                    throw new NoSuchFileException(data.toString(), null, "invalid: " + v);
                }
                verified.put(name, now);
            }
            ChunkDirectory.touch(CompleteFileRecord.recordOf(data));
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
            CompleteFileRecord.write(tr, size, crc.getValue());
            Files.createDirectories(data.getParent());
            verified.remove(name);
            Files.move(t, data, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            Files.move(tr, CompleteFileRecord.recordOf(data), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            assembled.increment();
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

    /** Complete files found invalid (record, size or checksum) and deleted. */
    public long rejected() {
        return rejected.sum();
    }
}
