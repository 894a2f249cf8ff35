package dev.modelfs.warmup;

import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.read.OpenedSource;
import dev.modelfs.read.ReadAhead;
import dev.modelfs.tree.FileNode;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;

/**
 * The read-path half of a warm-up: reads a part of a few files ({@link Region}: one kernel's largest data) with
 * the code a front end's read runs ({@link OpenedSource#read} in requests of a FUSE read's size, with read-ahead on
 * a pool of its own, then {@link #SMALL_READS} small reads within the part's first MiB), so that the chunk lookup, the
 * copy and the conversion kernels as a reader drives them are compiled before the tree is served.
 *
 * <p>Invariants: reads only; every chunk it converts goes into a private {@link ChunkCache} of
 * {@link #CACHE_BYTES}, freed before {@link #run} returns (no served byte and no served cache entry depends on
 * it, and it counts in no metric); at most {@code bytesPerFile} of each part, for at most {@link #REGION_WALL} each
 * and until the caller's deadline; it stops at the next request once
 * {@code stop} says so; a file that fails to open or read ends that file with a fine-level log line.
 */
final class ReadPathWarmup {
    private static final Logger LOG = Logger.getLogger(ReadPathWarmup.class.getName());
    /** A FUSE read's size (the kernel's {@code max_read} on this mount). */
    static final int REQUEST = 128 << 10;
    /** A small read's size: many of them (cached chunks) make the read path hot without converting much. */
    static final int SMALL = 4 << 10;
    /** Small reads per file: past C2's invocation threshold (Tier4InvocationThreshold, 5000). */
    static final int SMALL_READS = 6000;
    /** At most this many runs ({@link JitQueue#settle}): what one run compiled at a lower tier reaches C2 in the next. */
    static final int PASSES = 4;
    /** How long those passes may take, waits for the compilers included (a pass stops at that time too). */
    static final Duration PASSES_WALL = Duration.ofSeconds(5);
    /**
     * How long one pass may read one region: a part whose reads cost far more than their bytes (thousands of tiny
     * converted tensors, each its own chunk in a cache that holds 64 of them, as a hostile store's can be) is cut
     * off there, not read for minutes before the tree is served.
     */
    static final Duration REGION_WALL = Duration.ofSeconds(1);
    /** The private chunk cache's size. */
    static final long CACHE_BYTES = 64L << 20;

    private ReadPathWarmup() {}

    /**
     * A part of a file to read: {@code length} bytes from {@code start} of {@code file}, at {@code path} below the root
     * (for the log): one data of {@code kernel} ("" for a whole file without conversions).
     */
    record Region(Path path, FileNode file, String kernel, long start, long length) {}

    /**
     * Reads up to {@code bytesPerFile} of each of {@code regions} from its start, each for at most {@link #REGION_WALL}
     * and all until {@code deadlineNanos} ({@link System#nanoTime}); returns the regions read (a region cut off by
     * time counts as read).
     */
    static int run(BlobResolver resolver, List<Region> regions, long bytesPerFile, BooleanSupplier stop, long deadlineNanos) {
        int read = 0;
        try (ChunkCache cache = new ChunkCache(CACHE_BYTES);
             ReadAhead readAhead = ReadAhead.forCores();
             Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(REQUEST, 4096);
            for (Region region : regions) {
                if (stop.getAsBoolean()) {
                    break;
                }
                FileNode f = region.file();
                long until = Math.min(deadlineNanos, System.nanoTime() + REGION_WALL.toNanos());
                BooleanSupplier done = () -> stop.getAsBoolean() || System.nanoTime() - until > 0;
                try (OpenedSource src = OpenedSource.open(f.source(), resolver, cache, readAhead)) {
                    long start = Math.min(region.start(), src.size());
                    long end = Math.min(src.size(), start + Math.min(region.length(), bytesPerFile));
                    for (long off = start; off < end && !done.getAsBoolean(); off += REQUEST) {
                        src.read(off, buf, 0, Math.min(REQUEST, end - off));
                    }
                    long span = Math.min(end - start, 1 << 20);
                    for (int i = 0; span > 0 && i < SMALL_READS && !done.getAsBoolean(); i++) {
                        long off = start + (long) i * SMALL % span;
                        src.read(off, buf, 0, Math.min(SMALL, end - off));
                    }
                    read++;
                } catch (IOException | RuntimeException e) {
                    LOG.fine("read-path warm-up skips " + region.path() + ": " + e);
                }
            }
        }
        return read;
    }
}
