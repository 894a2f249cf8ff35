package dev.modelfs.cache;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;

/**
 * Converted chunks on disk ({@code --cache-dir}): a second tier under the {@link ChunkCache} that
 * survives restarts and is shared by every process pointed at the same directory.
 *
 * <p>A chunk is the file {@code DIR/chunks/<name[0..2]>/<name>} ({@link ChunkDirectory}: layout, size bound,
 * eviction) in the format of {@link ChunkFileFormat} (its bytes, then a checksummed trailer), written by one
 * background thread ({@link ChunkWriter}: queue and backlog). The name is the caller's (a hash of what the bytes are
 * computed from, never a path: {@code [0-9a-z-]}, checked). This class is the front of the three. The same directory
 * and bound hold complete converted files ({@link CompleteFiles}, {@link #completeFiles()}).
 *
 * <p>Invariants: a file is only ever written under {@code DIR/tmp/} and then renamed into place, so a reader
 * sees a complete file or none, whoever wrote it; {@link #read} accepts a file only when its size is the
 * expected length plus the trailer, the trailer's magic and length match and the CRC32C of the payload matches,
 * and otherwise deletes it and reports a miss (a truncated or corrupt file is never served); writes run on one
 * background thread with a bounded queue, and a full queue never blocks a reader: the chunk's hold is let go at
 * once and its name goes to a bounded backlog ({@value #BACKLOG} entries; beyond that the write is skipped) that
 * the writer works through whenever its queue is empty, writing each chunk still missing on disk from the memory
 * cache or, when it has left that, by converting it once more, its source kept meanwhile ({@link Later}; a
 * reader converting faster than the disk takes chunks would otherwise leave a quarter of a file unwritten for
 * good: BENCHMARKS.md), and {@link #close} writes what is left of it on the closing thread (its deadline shared with
 * the queued writes); the directory's size is kept near {@code maxBytes} by deleting the least recently used
 * chunks (a hit refreshes the file's mtime) once this process has written more than the slack since the last
 * trim; every I/O failure is a miss or a skipped write, logged once per kind.
 */
public final class DiskChunkStore implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(DiskChunkStore.class.getName());

    /** Chunks waiting to be written at most (each holds its buffer, up to 1 MiB) unless sized by {@link #queueFor}: {@value}. */
    public static final int DEFAULT_QUEUE = 64;
    private static final int MIN_QUEUE = 16;
    /** Chunks waiting in the backlog at most (a name and how to make the bytes again; no buffer): {@value}. */
    public static final int BACKLOG = 16_384;
    private static final int MAX_QUEUE = 1024;

    private final ChunkDirectory directory;
    private final ChunkWriter writer;
    private final CompleteFiles completeFiles;
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    private final Set<String> logged = ConcurrentHashMap.newKeySet();

    /**
     * Opens (creating it if needed) the chunk directory {@code dir}, bounded to about {@code maxBytes}, with
     * {@link #DEFAULT_QUEUE} queued writes at most.
     *
     * @throws IOException when the directory cannot be created
     */
    /** Whether the last write failed (one log line when writes start failing, one when they succeed again). */
    private final java.util.concurrent.atomic.AtomicBoolean failing = new java.util.concurrent.atomic.AtomicBoolean();

    public DiskChunkStore(Path dir, long maxBytes) throws IOException {
        this(dir, maxBytes, DEFAULT_QUEUE);
    }

    /**
     * The write queue for a memory {@link ChunkCache} of {@code cacheBytes}: half its chunks, at least {@value #MIN_QUEUE}
     * and at most {@value #MAX_QUEUE}. A queued chunk is one converted moments ago, so it is usually still in the memory
     * cache and the queue's hold costs no memory beyond the cache; a deeper queue skips fewer writes while a reader
     * converts faster than the disk takes chunks (1,013 of a 1,393-chunk file's chunks written with 64, 1,209 with 256:
     * BENCHMARKS.md).
     */
    public static int queueFor(long cacheBytes) {
        long chunks = Math.max(0, cacheBytes) / ChunkCache.BUFFER_BYTES / 2;
        return (int) Math.clamp(chunks, MIN_QUEUE, MAX_QUEUE);
    }

    /**
     * Like {@link #DiskChunkStore(Path, long)}, with at most {@code queuedWrites} chunks waiting to be written
     * (more are not written).
     */
    public DiskChunkStore(Path dir, long maxBytes, int queuedWrites) throws IOException {
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("cache-dir size must be positive: " + maxBytes);
        }
        this.directory = new ChunkDirectory(dir, maxBytes, this::logOnce);
        this.completeFiles = new CompleteFiles(directory, this::trim);
        directory.keepInUse(completeFiles::inUse);
        this.writer = new ChunkWriter(this, queuedWrites);
    }

    /**
     * Fills {@code dst} with chunk {@code name} when a complete, verified copy of exactly
     * {@code dst.byteSize()} bytes is on disk.
     *
     * @return whether {@code dst} now holds the chunk (false: a miss; {@code dst} may hold garbage)
     */
    public boolean read(String name, MemorySegment dst) {
        return read(name, dst, true);
    }

    /**
     * Like {@link #read}, for work that copies the directory's own chunks (assembling a complete file, {@link
     * CompleteFiles}): not counted as a hit or a miss and not a use (its place in the LRU order is kept); a file found
     * invalid is still deleted and counted as rejected.
     */
    public boolean copy(String name, MemorySegment dst) {
        return read(name, dst, false);
    }

    private boolean read(String name, MemorySegment dst, boolean count) {
        Path file = fileOf(name);
        try {
            ChunkFileFormat.Verdict v = ChunkFileFormat.read(file, dst);
            if (v != ChunkFileFormat.Verdict.VALID) {
                return corrupt(file, v == ChunkFileFormat.Verdict.SIZE ? "size" : "checksum");
            }
        } catch (NoSuchFileException e) {
            if (count) {
                misses.increment();
            }
            return false;
        } catch (IOException | UncheckedIOException e) {
            logOnce("read", "cannot read cached chunk " + file + ": " + e);
            if (count) {
                misses.increment();
            }
            return false;
        }
        if (count) {
            ChunkDirectory.touch(file);
            hits.increment();
        }
        return true;
    }

    /**
     * Makes chunk {@code name} the least recently used (the first the size bound trims): its bytes were assembled into
     * a complete file, which reads now go to ({@link CompleteFiles}); a later read of it as a chunk makes it recent
     * again. Nothing when it is not there.
     */
    public void demote(String name) {
        try {
            java.nio.file.Files.setLastModifiedTime(fileOf(name), java.nio.file.attribute.FileTime.fromMillis(0));
        } catch (IOException | UncheckedIOException e) {
            // trimmed meanwhile
        }
    }

    /**
     * How to write a chunk that a full write queue turned away, from the backlog. {@link #keep} is called when it
     * enters the backlog; after a {@code true}, {@link #drop} is called exactly once: after {@link #write}, or
     * when the entry is dropped (the backlog full, the store closed).
     */
    public interface Later {
        /** Takes what {@link #write} needs (a hold of the file it converts from); false when that is gone (the chunk is skipped). */
        boolean keep();

        /**
         * On the writer thread: writes the chunk's bytes with {@link DiskChunkStore#write} and returns what that
         * returned; an exception skips the chunk.
         */
        boolean write();

        /** Lets go of what {@link #keep} took. */
        void drop();
    }

    /**
     * Writes {@code chunk} as {@code name} in the background; the chunk is held until written. When the queue is
     * full, {@code later} (null: none) goes to the backlog instead ({@link Later}): the writer takes it once its
     * queue is empty and writes it unless the file exists by then. Skipped when the store is closed.
     */
    void writeLater(String name, ChunkCache.Chunk chunk, Later later) {
        ChunkDirectory.checkName(name);
        writer.writeLater(name, chunk, later);
    }

    /**
     * Writes {@code bytes} as chunk {@code name} now (temporary file, then rename); returns whether it was written. A
     * write that fails (the disk is full: ENOSPC, EDQUOT; read-only: EROFS; the directory was removed) leaves no file
     * but the temporary, which is deleted, logs one line until a write succeeds again (then one more), and the next
     * write tries again: the cache resumes when space returns (SEMANTICS.md "When the cache directory's disk fails").
     */
    public boolean write(String name, MemorySegment bytes) {
        Path file = fileOf(name);
        Path t = directory.temporaryFor(name);
        try {
            try {
                ChunkFileFormat.write(t, bytes);
            } catch (java.nio.file.NoSuchFileException gone) {      // the cache directory was removed: made again
                directory.recreate();
                ChunkFileFormat.write(t, bytes);
            }
            boolean over = directory.install(t, file, bytes.byteSize() + ChunkFileFormat.TRAILER);
            writes.increment();
            if (failing.compareAndSet(true, false)) {
                LOG.warning("the chunk cache directory takes chunks again: " + file.getParent().getParent().getParent());
            }
            if (over) {
                trim();
            }
            return true;
        } catch (IOException | UncheckedIOException e) {
            if (failing.compareAndSet(false, true)) {
                LOG.warning("cannot write cached chunk " + file + ": " + e + " (chunks are served from memory; the next "
                        + "chunks are tried again, and not logged until one is written)");
            }
            ChunkDirectory.deleteQuietly(t);
            return false;
        }
    }

    /** The complete converted files of the same directory, under the same bound ({@link CompleteFiles}). */
    public CompleteFiles completeFiles() {
        return completeFiles;
    }

    /** Whether chunk {@code name} is on disk now (not verified: {@link #read} does that). */
    public boolean contains(String name) {
        return java.nio.file.Files.isRegularFile(fileOf(name));
    }

    /** Chunks found valid on disk. */
    public long hits() {
        return hits.sum();
    }

    /** Chunks looked for and not found, or found truncated or corrupt. */
    public long misses() {
        return misses.sum();
    }

    /** Chunks written by this process. */
    public long writes() {
        return writes.sum();
    }

    /** Chunks written from the backlog, after the queue had been full when they were converted. */
    public long backfilled() {
        return writer.backfilled();
    }

    /** Chunks never written: the backlog was full, the store closed, or making them again failed. */
    public long skipped() {
        return writer.skipped();
    }

    /**
     * The bytes this directory may still take before its size bound trims anything: the bound less the chunks and
     * complete files counted on it (as this process counts them: another process sharing the directory is not seen).
     */
    public long room() {
        return directory.room();
    }

    /** The directory's size bound ({@code --cache-dir-size}), in bytes. */
    public long bound() {
        return directory.bound();
    }

    /** Chunks waiting to be written: queued, being written, or in the backlog. */
    public int pending() {
        return writer.pending();
    }

    /** Files found invalid (wrong size or checksum) and deleted. */
    public long rejected() {
        return rejected.sum();
    }

    /** The file chunk {@code name} is stored in (for tests and tools). */
    public Path fileOf(String name) {
        return directory.fileOf(name);
    }

    /** Waits up to {@code millis} for the queued writes and the backlog to finish (tests, shutdown). */
    public boolean flush(long millis) {
        long until = System.nanoTime() + millis * 1_000_000;
        while (!writer.idle()) {
            if (System.nanoTime() > until) {
                return false;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    /**
     * Stops the writer: the queued writes are finished, then the backlog's chunks are written on the calling thread, all
     * within {@value ChunkWriter#CLOSE_MILLIS} ms; whatever is left then is dropped (counted as skipped).
     */
    @Override
    public void close() {
        writer.close();
    }

    /** Trims the directory to its bound, one writer at a time (under this store's monitor). */
    private synchronized void trim() {
        directory.trim();
    }

    private boolean corrupt(Path file, String why) {
        LOG.fine("cached chunk " + file + " is invalid (" + why + "): deleted, converting again");
        rejected.increment();
        misses.increment();
        ChunkDirectory.deleteQuietly(file);
        return false;
    }

    private void logOnce(String kind, String message) {
        if (logged.add(kind)) {
            LOG.warning(message + " (further " + kind + " failures of the chunk cache directory are not logged)");
        }
    }
}
