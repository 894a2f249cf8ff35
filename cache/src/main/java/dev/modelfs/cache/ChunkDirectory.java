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
 * {@code DIR/chunks/<name[0..2]>/<name>}, written under {@code DIR/tmp/} and renamed into place; the directory is kept
 * near {@code maxBytes} by deleting the least recently used chunks (a hit refreshes a file's mtime) once more than
 * the bound is on disk, down to 90 % of it.
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
    private final Path tmp;
    private final long maxBytes;
    private final AtomicLong bytesOnDisk = new AtomicLong();
    private final BiConsumer<String, String> log;

    /** Opens (creating it if needed) {@code dir} bounded to about {@code maxBytes}; failures go to {@code log(kind, message)}. */
    ChunkDirectory(Path dir, long maxBytes, BiConsumer<String, String> log) throws IOException {
        this.chunks = Files.createDirectories(dir.resolve("chunks"));
        this.tmp = Files.createDirectories(dir.resolve("tmp"));
        this.maxBytes = maxBytes;
        this.log = log;
        removeStaleTemporaries();
        bytesOnDisk.set(sizeOf(listChunks()));
    }

    /** The file chunk {@code name} is stored in. */
    Path fileOf(String name) {
        checkName(name);
        return chunks.resolve(name.substring(0, 2)).resolve(name);
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
        List<Path> files = listChunks();
        long total = sizeOf(files);
        if (total > maxBytes) {
            List<Path> oldestFirst = new ArrayList<>(files);
            oldestFirst.sort(Comparator.comparingLong(ChunkDirectory::mtime));
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
            log.accept("list", "cannot list " + chunks + ": " + e);
            return List.of();
        }
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
