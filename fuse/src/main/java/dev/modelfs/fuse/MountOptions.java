package dev.modelfs.fuse;

import dev.modelfs.warmup.WarmupDeadline;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The options a mount is made with.
 *
 * <p>Defaults (docs/DESIGN.md §3): {@code ro}, {@code use_ino} (stable inode numbers reach the kernel),
 * {@code auto_cache} (the page cache survives reopen while a file's mtime and size are unchanged:
 * the speed of {@code kernel_cache} for immutable blobs, yet a re-pulled tag, which changes the
 * manifest mtime, is never served stale pages as {@code kernel_cache} would), and 0.7-second
 * attribute, entry and negative timeouts: with the 250 ms manifest rescan, the longest that still lets
 * a pull, removal or re-pull show within a second, since libfuse2's high-level API cannot invalidate
 * kernel entries on demand. {@code splice_write}: blob ranges go from the page cache to the FUSE device
 * with {@code splice(2)}, not copied through this process ({@link FuseWorkers}' {@code read_buf});
 * {@code -o no_splice_write} turns it off.
 *
 * @param allowOther  let other users (and an NFS server) read the mount
 * @param uid         owner shown for every file
 * @param gid         group shown for every file
 * @param extra       further raw {@code -o} options passed to libfuse
 * @param cacheBytes  converted-chunk cache size
 * @param refreshMillis how often the store's manifests are rescanned
 * @param threads     FUSE worker threads ({@link FuseWorkers}: JVM-owned, persistent; each serves one request at
 *                    a time, conversions included, so this is also how many chunks convert at once)
 * @param cacheDir    directory of the on-disk cache of converted chunks ({@code --cache-dir}), or null for none
 * @param cacheDirBytes bound of that directory
 * @param warmup      the wall-clock bound of the warm-up of the store's conversion kernels and read path behind the
 *                    mount ({@code KernelWarmup}, {@code WarmupDeadline}; {@code --warmup-seconds}); zero for none
 *                    ({@code --no-warmup})
 * @param kernelPassthrough open whole-blob files with the kernel's FUSE passthrough when the kernel (Linux 6.9+) and
 *                    this process ({@code CAP_SYS_ADMIN}) allow: their reads and maps then never reach this process
 *                    ({@code PassthroughChannels}; {@code --no-kernel-passthrough} turns it off)
 * @param ioUring     take requests through io_uring when the kernel lets FUSE servers ({@code fuse.enable_uring=1},
 *                    Linux 6.14+): {@code FuseRing}, {@code --io-uring}. Off by default: it answers 4 KiB random reads
 *                    about 1.5x as fast, but copies every blob byte it serves once more (no {@code splice}), which
 *                    costs sequential reads of reassembled files 15-34 % (BENCHMARKS.md, stop 26)
 * @param convertAhead with a cache directory, convert models' most loaded files into it ahead of readers once the
 *                    warm-up is done ({@code ServedTree.convertAhead}; {@code --no-convert-ahead} turns it off)
 * @param readAheadKib the kernel's read-ahead window on the mount in KiB ({@code --read-ahead-kb},
 *                    {@link ReadAheadWindow}: set as root, else the kernel's 128 KiB); 0 leaves the kernel's
 */
public record MountOptions(boolean allowOther, long uid, long gid, List<String> extra, long cacheBytes,
                           long refreshMillis, boolean debug, int threads, Path cacheDir, long cacheDirBytes,
                           Duration warmup, boolean kernelPassthrough, boolean ioUring, boolean convertAhead,
                           int readAheadKib) {
    public MountOptions {
        extra = List.copyOf(extra);
        if (warmup.isNegative()) {
            throw new IllegalArgumentException("a negative warm-up: " + warmup);
        }
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, not " + threads);
        }
        if (readAheadKib < 0) {
            throw new IllegalArgumentException("a negative read-ahead window: " + readAheadKib);
        }
    }

    /**
     * Options without a disk cache, with the warm-up, kernel passthrough and the default read-ahead window, requests
     * through {@code /dev/fuse}.
     */
    public MountOptions(boolean allowOther, long uid, long gid, List<String> extra, long cacheBytes,
                        long refreshMillis, boolean debug, int threads) {
        this(allowOther, uid, gid, extra, cacheBytes, refreshMillis, debug, threads, null, 0, WarmupDeadline.DEFAULT_WALL, true, false,
                false, ReadAheadWindow.DEFAULT_KIB);
    }

    /**
     * The default worker count: one per core, at least 2 (the kernel keeps a sequential reader's read-ahead and
     * other readers' requests in flight). More workers than cores spread one reader's requests over more threads
     * and wake-ups: on 2 cores, 2 workers read a fresh mount's {@code model.gguf} at 3.15 GB/s against 2.71 with 4,
     * with as many fio IOPS (BENCHMARKS.md).
     */
    public static int defaultThreads() {
        return Math.max(2, Runtime.getRuntime().availableProcessors());
    }

    /** {@code --read-ahead-kb}'s default, in KiB. */
    public static int defaultReadAheadKib() {
        return ReadAheadWindow.DEFAULT_KIB;
    }

    /** The {@code -o ...} arguments for libfuse (the mount point is added by {@link MountSession}). */
    public String[] fuseArgs() {
        List<String> o = new ArrayList<>(List.of("ro", "use_ino", "auto_cache", "attr_timeout=0.7", "entry_timeout=0.7",
                "negative_timeout=0.7", "fsname=modelfs", "subtype=modelfs", "default_permissions", "splice_write"));
        if (allowOther) {
            o.add("allow_other");
        }
        o.addAll(extra);
        return new String[] {"-o", String.join(",", o)};
    }
}
