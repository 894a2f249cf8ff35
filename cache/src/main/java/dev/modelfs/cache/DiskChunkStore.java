package dev.modelfs.cache;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * Converted chunks on disk ({@code --cache-dir}): a second tier under the {@link ChunkCache} that
 * survives restarts and is shared by every process pointed at the same directory.
 *
 * <p>A chunk is the file {@code DIR/chunks/<name[0..2]>/<name>}: its bytes, then a 24-byte trailer
 * (magic {@value #MAGIC}, the payload length, its CRC32C), little-endian. The name is the caller's
 * (a hash of what the bytes are computed from, never a path: {@code [0-9a-z-]}, checked).
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
    private static final String MAGIC = "MFSCHNK1";
    private static final int TRAILER = 24;
    private static final Pattern NAME = Pattern.compile("[0-9a-z][0-9a-z-]{2,127}");
    /** Temporary files older than this are a crashed writer's and removed at start. */
    private static final long STALE_TMP_MILLIS = 3_600_000;

    private final Path chunks;
    private final Path tmp;
    private final long maxBytes;
    private final ThreadPoolExecutor writer;
    private final AtomicLong bytesOnDisk = new AtomicLong();
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    private final LongAdder backfilled = new LongAdder();
    private final LongAdder skipped = new LongAdder();
    /** Chunks whose write found the queue full, in the order they came; the writer takes them when idle. */
    private final ArrayBlockingQueue<Entry> backlog = new ArrayBlockingQueue<>(BACKLOG);
    private final Set<String> logged = ConcurrentHashMap.newKeySet();

    /**
     * Opens (creating it if needed) the chunk directory {@code dir}, bounded to about {@code maxBytes}, with
     * {@link #DEFAULT_QUEUE} queued writes at most.
     *
     * @throws IOException when the directory cannot be created
     */
    public DiskChunkStore(Path dir, long maxBytes) throws IOException {
        this(dir, maxBytes, DEFAULT_QUEUE);
    }

    /** Chunks waiting to be written at most (each holds its buffer, up to 1 MiB) unless sized by {@link #queueFor}: {@value}. */
    public static final int DEFAULT_QUEUE = 64;
    private static final int MIN_QUEUE = 16;
    /** Chunks waiting in the backlog at most (a name and how to make the bytes again; no buffer): {@value}. */
    public static final int BACKLOG = 16_384;
    private static final int MAX_QUEUE = 1024;

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
        this.chunks = Files.createDirectories(dir.resolve("chunks"));
        this.tmp = Files.createDirectories(dir.resolve("tmp"));
        this.maxBytes = maxBytes;
        removeStaleTemporaries();
        bytesOnDisk.set(sizeOf(listChunks()));
        this.writer = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(queuedWrites), r -> {
            Thread t = new Thread(r, "modelfs-chunk-writer");
            t.setDaemon(true);
            return t;
        }, (r, executor) -> ((Task) r).rejected());
        this.writer.allowCoreThreadTimeOut(true);
    }

    /**
     * Fills {@code dst} with chunk {@code name} when a complete, verified copy of exactly
     * {@code dst.byteSize()} bytes is on disk.
     *
     * @return whether {@code dst} now holds the chunk (false: a miss; {@code dst} may hold garbage)
     */
    public boolean read(String name, MemorySegment dst) {
        Path file = fileOf(name);
        long length = dst.byteSize();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            if (ch.size() != length + TRAILER || !readFully(ch, dst.asByteBuffer(), 0)) {
                return corrupt(file, "size");
            }
            ByteBuffer trailer = ByteBuffer.allocate(TRAILER).order(ByteOrder.LITTLE_ENDIAN);
            if (!readFully(ch, trailer, length)) {
                return corrupt(file, "size");
            }
            if (trailer.getLong(0) != magic() || trailer.getLong(8) != length || trailer.getLong(16) != crc(dst)) {
                return corrupt(file, "checksum");
            }
        } catch (NoSuchFileException e) {
            misses.increment();
            return false;
        } catch (IOException | UncheckedIOException e) {
            logOnce("read", "cannot read cached chunk " + file + ": " + e);
            misses.increment();
            return false;
        }
        touch(file);
        hits.increment();
        return true;
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
        checkName(name);
        if (writer.isShutdown() || !chunk.tryAcquire()) {
            skipped.increment();
            return;
        }
        writer.execute(new Write(name, chunk, later));
    }

    /** Writes {@code bytes} as chunk {@code name} now (temporary file, then rename); returns whether it was written. */
    public boolean write(String name, MemorySegment bytes) {
        Path file = fileOf(name);
        Path t = tmp.resolve(name + "." + ProcessHandle.current().pid() + "." + Thread.currentThread().threadId() + "." + System.nanoTime());
        try {
            try (FileChannel ch = FileChannel.open(t, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer trailer = ByteBuffer.allocate(TRAILER).order(ByteOrder.LITTLE_ENDIAN)
                        .putLong(magic()).putLong(bytes.byteSize()).putLong(crc(bytes)).flip();
                writeFully(ch, bytes.asByteBuffer());
                writeFully(ch, trailer);
            }
            Files.createDirectories(file.getParent());
            Files.move(t, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            writes.increment();
            if (bytesOnDisk.addAndGet(bytes.byteSize() + TRAILER) > maxBytes) {
                trim();
            }
            return true;
        } catch (IOException | UncheckedIOException e) {
            logOnce("write", "cannot write cached chunk " + file + ": " + e);
            deleteQuietly(t);
            return false;
        }
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
        return backfilled.sum();
    }

    /** Chunks never written: the backlog was full, the store closed, or making them again failed. */
    public long skipped() {
        return skipped.sum();
    }

    /** Chunks waiting to be written: queued, being written, or in the backlog. */
    public int pending() {
        return writer.getQueue().size() + writer.getActiveCount() + backlog.size();
    }

    /** Files found invalid (wrong size or checksum) and deleted. */
    public long rejected() {
        return rejected.sum();
    }

    /** The file chunk {@code name} is stored in (for tests and tools). */
    public Path fileOf(String name) {
        checkName(name);
        return chunks.resolve(name.substring(0, 2)).resolve(name);
    }

    /** Waits up to {@code millis} for the queued writes and the backlog to finish (tests, shutdown). */
    public boolean flush(long millis) {
        long until = System.nanoTime() + millis * 1_000_000;
        while (writer.getActiveCount() > 0 || !writer.getQueue().isEmpty() || !backlog.isEmpty()) {
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

    /** How long {@link #close} spends finishing the queued writes and then the backlog's, at most. */
    static final long CLOSE_MILLIS = 5_000;

    /**
     * Stops the writer: the queued writes are finished, then the backlog's chunks are written on the calling thread, all
     * within {@value #CLOSE_MILLIS} ms; whatever is left then is dropped (counted as skipped).
     */
    @Override
    public void close() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_MILLIS);
        writer.shutdown();
        try {
            if (writer.awaitTermination(CLOSE_MILLIS, TimeUnit.MILLISECONDS)) {
                for (Entry e; System.nanoTime() < deadline && (e = backlog.poll()) != null; ) {
                    new Backfill(e).writeOnce();
                }
            } else {
                writer.shutdownNow().forEach(r -> ((Task) r).rejected());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        dropBacklog();
    }

    /** Drops every backlog entry (the store is shut down). */
    private void dropBacklog() {
        for (Entry e = backlog.poll(); e != null; e = backlog.poll()) {
            skip(e);
        }
    }

    /** Work for the writer thread. */
    private sealed interface Task extends Runnable permits Write, Backfill {
        /** Not run: the queue was full or the store closed. */
        void rejected();
    }

    /** One queued write, holding its chunk. */
    private final class Write implements Task {
        private final String name;
        private final ChunkCache.Chunk chunk;
        private final Later later;

        Write(String name, ChunkCache.Chunk chunk, Later later) {
            this.name = name;
            this.chunk = chunk;
            this.later = later;
        }

        @Override
        public void run() {
            try {
                write(name, chunk.bytes());
            } finally {
                chunk.release();
            }
            backfillIfIdle();
        }

        @Override
        public void rejected() {
            chunk.release();
            if (later == null || writer.isShutdown() || !later.keep()) {
                skipped.increment();
                return;
            }
            Entry e = new Entry(name, later);
            if (!backlog.offer(e)) {
                skip(e);
            } else if (writer.isShutdown()) {
                dropBacklog();                            // closed meanwhile, perhaps after close() dropped the backlog
            }
        }
    }

    /** A chunk in the backlog: its name, and what writes it (kept). */
    private record Entry(String name, Later later) {}

    /** Gives up on a kept entry: lets go of what it kept and counts it as skipped. */
    private void skip(Entry e) {
        e.later().drop();
        skipped.increment();
    }

    /** Writes one chunk of the backlog unless the file exists by now, then looks for the next. */
    private final class Backfill implements Task {
        private final Entry entry;

        Backfill(Entry entry) {
            this.entry = entry;
        }

        @Override
        public void run() {
            writeOnce();
            backfillIfIdle();
        }

        /** Writes the chunk unless its file exists by now, and lets go of what the entry kept. */
        void writeOnce() {
            try {
                if (!Files.exists(fileOf(entry.name()))) {
                    (entry.later().write() ? backfilled : skipped).increment();
                }
            } catch (RuntimeException e) {                 // the blob truncated meanwhile, the cache closed...
                skipped.increment();
                LOG.fine("chunk " + entry.name() + " not written from the backlog: " + e);
            } finally {
                entry.later().drop();
            }
        }

        @Override
        public void rejected() {
            if (writer.isShutdown() || !backlog.offer(entry)) {
                skip(entry);
            }
        }
    }

    /** On the writer thread after a task: when no write is queued, queues the backlog's next chunk. */
    private void backfillIfIdle() {
        if (writer.getQueue().isEmpty() && !writer.isShutdown()) {
            Entry next = backlog.poll();
            if (next != null) {
                writer.execute(new Backfill(next));
            }
        }
    }

    /** Deletes the least recently used chunks until the directory holds at most 90 % of the bound. */
    private synchronized void trim() {
        List<Path> files = listChunks();
        long total = sizeOf(files);
        if (total > maxBytes) {
            List<Path> oldestFirst = new ArrayList<>(files);
            oldestFirst.sort(Comparator.comparingLong(DiskChunkStore::mtime));
            long target = maxBytes / 10 * 9;
            for (Path p : oldestFirst) {
                if (total <= target) {
                    break;
                }
                long size = sizeOrZero(p);
                if (deleteQuietly(p)) {
                    total -= size;
                }
            }
        }
        bytesOnDisk.set(total);
    }

    private List<Path> listChunks() {
        try (Stream<Path> s = Files.walk(chunks, 2)) {
            return s.filter(Files::isRegularFile).toList();
        } catch (IOException | UncheckedIOException e) {
            logOnce("list", "cannot list " + chunks + ": " + e);
            return List.of();
        }
    }

    private void removeStaleTemporaries() {
        long now = System.currentTimeMillis();
        try (Stream<Path> s = Files.list(tmp)) {
            s.filter(p -> now - mtime(p) / 1_000_000 > STALE_TMP_MILLIS).forEach(DiskChunkStore::deleteQuietly);
        } catch (IOException | UncheckedIOException e) {
            logOnce("list", "cannot list " + tmp + ": " + e);
        }
    }

    private boolean corrupt(Path file, String why) {
        LOG.fine("cached chunk " + file + " is invalid (" + why + "): deleted, converting again");
        rejected.increment();
        misses.increment();
        deleteQuietly(file);
        return false;
    }

    private void touch(Path file) {
        try {
            Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis()));
        } catch (IOException e) {
            // another process trimmed it meanwhile: the bytes are already read
        }
    }

    private void logOnce(String kind, String message) {
        if (logged.add(kind)) {
            LOG.warning(message + " (further " + kind + " failures of the chunk cache directory are not logged)");
        }
    }

    private static void checkName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("not a chunk name: " + name);
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

    private static long magic() {
        return ByteBuffer.wrap(MAGIC.getBytes(StandardCharsets.US_ASCII)).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    private static long mtime(Path p) {
        try {
            return Files.getLastModifiedTime(p).to(TimeUnit.NANOSECONDS);
        } catch (IOException e) {
            return Long.MAX_VALUE;      // gone already
        }
    }

    private static long sizeOrZero(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            return 0;
        }
    }

    private static long sizeOf(List<Path> files) {
        long total = 0;
        for (Path p : files) {
            total += sizeOrZero(p);
        }
        return total;
    }

    private static boolean deleteQuietly(Path p) {
        try {
            return Files.deleteIfExists(p);
        } catch (IOException e) {
            return false;
        }
    }
}
