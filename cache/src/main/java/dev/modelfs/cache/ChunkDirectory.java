package dev.modelfs.cache;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The layout and the size bound of a {@code --cache-dir}: chunk {@code name} is the file
 * {@code DIR/chunks/<name[0..2]>/<name>}, complete file {@code name} ({@link CompleteFiles}) is
 * {@code DIR/files/<name[0..2]>/<name>} plus its record {@code <name>.sum}; both are written under {@code DIR/tmp/} and
 * renamed into place; the directory is kept near {@code maxBytes} by deleting the least recently used chunks and
 * complete files (a hit refreshes a chunk's mtime, a complete file's record's; the chunks of an assembled file are
 * demoted to the epoch, {@link DiskChunkStore#demote}) once more than the bound is on disk, down to 90 % of it, never
 * a complete file in use.
 *
 * <p>Invariants: a name is the caller's ({@code [0-9a-z-]}, checked: never a path); temporary files older than an hour
 * are a crashed writer's and removed when the directory is opened; every failure to list is reported to the
 * {@code log} once per kind and treated as an empty listing.
 */
final class ChunkDirectory {
    private static final Pattern NAME = Pattern.compile("[0-9a-z][0-9a-z-]{2,127}");
    /** Temporary files older than this are a crashed writer's and removed at start. */
    private static final long STALE_TMP_MILLIS = 3_600_000;

    private final Path chunks;
    private final Path files;
    private final Path tmp;
    /** Whether a complete file (by file name) is in use and must not be trimmed ({@link CompleteFiles#inUse}). */
    private volatile java.util.function.Predicate<String> inUse = n -> false;
    private final long maxBytes;
    private final AtomicLong bytesOnDisk = new AtomicLong();
    private final BiConsumer<String, String> log;

    /** Opens (creating it if needed) {@code dir} bounded to about {@code maxBytes}; failures go to {@code log(kind, message)}. */
    ChunkDirectory(Path dir, long maxBytes, BiConsumer<String, String> log) throws IOException {
        this.chunks = Files.createDirectories(dir.resolve("chunks"));
        this.files = Files.createDirectories(dir.resolve("files"));
        this.tmp = Files.createDirectories(dir.resolve("tmp"));
        this.maxBytes = maxBytes;
        this.log = log;
        removeStaleTemporaries();
        bytesOnDisk.set(sizeOf(listChunks()));
    }

    /** Creates the directory's folders again (the cache directory was removed while serving). */
    void recreate() throws IOException {
        Files.createDirectories(chunks);
        Files.createDirectories(files);
        Files.createDirectories(tmp);
    }

    /** The file chunk {@code name} is stored in. */
    Path fileOf(String name) {
        checkName(name);
        return chunks.resolve(name.substring(0, 2)).resolve(name);
    }

    /** The data file of complete file {@code name}. */
    Path completeFileOf(String name) {
        checkName(name);
        return files.resolve(name.substring(0, 2)).resolve(name);
    }

    /** From now on {@code inUse} says which complete files (by file name) {@link #trim} keeps. */
    void keepInUse(java.util.function.Predicate<String> inUse) {
        this.inUse = inUse;
    }

    /** The size bound, in bytes. */
    long bound() {
        return maxBytes;
    }

    /** The bytes left under the bound (negative when over it, until the next trim). */
    long room() {
        return maxBytes - bytesOnDisk.get();
    }

    /** Counts {@code bytes} installed by a caller against the bound; whether the directory is now over it. */
    boolean account(long bytes) {
        return bytesOnDisk.addAndGet(bytes) > maxBytes;
    }

    /** A new temporary file name for chunk {@code name}, unique to this process and thread. */
    Path temporaryFor(String name) {
        return tmp.resolve(name + "." + ProcessHandle.current().pid() + "." + Thread.currentThread().threadId() + "." + System.nanoTime());
    }

    /**
     * Moves the written temporary {@code t} into place as {@code file} and counts {@code bytes} against the bound;
     * returns whether the directory is now over it (then the caller calls {@link #trim}).
     */
    boolean install(Path t, Path file, long bytes) throws IOException {
        Files.createDirectories(file.getParent());
        Files.move(t, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        return bytesOnDisk.addAndGet(bytes) > maxBytes;
    }

    /** Marks {@code file} as just used (the LRU order); a file trimmed meanwhile is ignored. */
    static void touch(Path file) {
        try {
            Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis()));
        } catch (IOException e) {
            // another process trimmed it meanwhile: the bytes are already read
        }
    }

    /** Whether {@code name} is a valid chunk name; else throws. */
    static void checkName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("not a chunk name: " + name);
        }
    }

    /** Deletes the least recently used chunks until the directory holds at most 90 % of the bound (one caller at a time). */
    void trim() {
        List<Path> all = listChunks();
        long total = sizeOf(all);
        if (total > maxBytes) {
            List<Path> oldestFirst = new ArrayList<>(all);
            oldestFirst.sort(Comparator.comparingLong(this::lruTime));
            long target = maxBytes / 10 * 9;
            for (Path p : oldestFirst) {
                if (total <= target) {
                    break;
                }
                boolean record = CompleteFileRecord.isRecord(p);
                if (p.startsWith(files) && (record || inUse.test(p.getFileName().toString()))) {
                    continue;                                   // a record goes with its data file; a file in use stays
                }
                long size = sizeOrZero(p);
                if (p.startsWith(files)) {
                    Path r = CompleteFileRecord.recordOf(p);
                    size += sizeOrZero(r);
                    deleteQuietly(r);
                }
                if (deleteQuietly(p)) {
                    total -= size;
                }
            }
        }
        bytesOnDisk.set(total);
    }

    /** Every chunk file, complete file and record. */
    private List<Path> listChunks() {
        List<Path> all = new ArrayList<>();
        for (Path root : List.of(chunks, files)) {
            try (Stream<Path> s = Files.walk(root, 2)) {
                s.filter(Files::isRegularFile).forEach(all::add);
            } catch (IOException | UncheckedIOException e) {
                log.accept("list", "cannot list " + root + ": " + e);
            }
        }
        return all;
    }

    /** When {@code p} was last used: a chunk's mtime, a complete file's record's (its own never changes). */
    private long lruTime(Path p) {
        if (p.startsWith(files) && !CompleteFileRecord.isRecord(p)) {
            long r = mtime(CompleteFileRecord.recordOf(p));
            return r == Long.MAX_VALUE ? mtime(p) : r;
        }
        return mtime(p);
    }

    private void removeStaleTemporaries() {
        long now = System.currentTimeMillis();
        try (Stream<Path> s = Files.list(tmp)) {
            s.filter(p -> now - mtime(p) / 1_000_000 > STALE_TMP_MILLIS).forEach(ChunkDirectory::deleteQuietly);
        } catch (IOException | UncheckedIOException e) {
            log.accept("list", "cannot list " + tmp + ": " + e);
        }
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

    /** Deletes {@code p} if it exists; false when it could not be deleted or was not there. */
    static boolean deleteQuietly(Path p) {
        try {
            return Files.deleteIfExists(p);
        } catch (IOException e) {
            return false;
        }
    }
}
