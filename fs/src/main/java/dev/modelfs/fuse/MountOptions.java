package dev.modelfs.fuse;

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
 * kernel entries on demand.
 *
 * @param allowOther  let other users (and an NFS server) read the mount
 * @param uid         owner shown for every file
 * @param gid         group shown for every file
 * @param extra       further raw {@code -o} options passed to libfuse
 * @param cacheBytes  converted-chunk cache size
 * @param refreshMillis how often the store's manifests are rescanned
 * @param multithreaded libfuse2's multi-threaded loop instead of the default single-threaded one ({@code -s}):
 *                    with jnr-fuse every request on a fresh libfuse worker thread attaches a new Java
 *                    thread, and the loop keeps creating and retiring workers, so on these machines the
 *                    single-threaded loop reads faster (passthrough first read about 1.4 vs 0.8 GB/s,
 *                    BENCHMARKS.md); the multi-threaded loop only pays off for many concurrent readers of
 *                    converted files on many cores
 */
public record MountOptions(boolean allowOther, long uid, long gid, List<String> extra, long cacheBytes,
                           long refreshMillis, boolean debug, boolean multithreaded) {
    public MountOptions {
        extra = List.copyOf(extra);
    }

    /** The {@code -o ...} arguments for libfuse. */
    public String[] fuseArgs() {
        List<String> o = new ArrayList<>(List.of("ro", "use_ino", "auto_cache", "attr_timeout=0.7", "entry_timeout=0.7",
                "negative_timeout=0.7", "fsname=modelfs", "subtype=modelfs", "default_permissions"));
        if (allowOther) {
            o.add("allow_other");
        }
        o.addAll(extra);
        return multithreaded
                ? new String[] {"-o", String.join(",", o)}
                : new String[] {"-s", "-o", String.join(",", o)};
    }
}
