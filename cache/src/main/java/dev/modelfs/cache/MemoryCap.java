package dev.modelfs.cache;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import java.util.logging.Logger;

/**
 * The memory limit of this process's cgroup (v2 {@code memory.max}, v1 {@code memory.limit_in_bytes}: the systemd
 * unit's {@code MemoryMax=}, a container's limit) and the chunk cache that fits it (SEMANTICS.md "Memory bounds").
 * The chunk cache's buffers are anonymous memory the kernel cannot reclaim, so a default cache larger than a
 * quarter of the limit is cut to that quarter; the JVM sizes its heap to the same cgroup limit itself (a quarter by
 * default, half under about 256 MiB). Mapped blob pages count against the limit too, but are reclaimable.
 *
 * <p>Invariants: the limit is the smallest one set on the process's cgroup and its ancestors, none when nothing is
 * readable or every one is unlimited; {@link #chunkCacheBytes} never grows the cache a user asked for and never cuts
 * it below {@value #MIN_CACHE} bytes.
 */
public final class MemoryCap {
    private static final Logger LOG = Logger.getLogger(MemoryCap.class.getName());
    /** The smallest chunk cache a limit cuts to: a few chunks per reader. */
    public static final long MIN_CACHE = 32L << 20;
    /** v1 writes "no limit" as a huge page-rounded number. */
    private static final long UNLIMITED_V1 = 1L << 60;

    private MemoryCap() {
    }

    /** This process's cgroup memory limit in bytes, if any. */
    public static OptionalLong limit() {
        try {
            return limit(Files.readAllLines(Path.of("/proc/self/cgroup")), Path.of("/sys/fs/cgroup"));
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }

    /**
     * The limit from the lines of {@code /proc/self/cgroup} and the cgroup file systems under {@code root} (v2 at
     * {@code root} or {@code root/unified}, v1's memory controller at {@code root/memory}).
     */
    static OptionalLong limit(List<String> procSelfCgroup, Path root) {
        long best = Long.MAX_VALUE;
        for (String line : procSelfCgroup) {
            String[] f = line.split(":", 3);
            if (f.length != 3) {
                continue;
            }
            if (f[0].equals("0") && f[1].isEmpty()) {
                best = Math.min(best, smallest(root, f[2], "memory.max"));
                best = Math.min(best, smallest(root.resolve("unified"), f[2], "memory.max"));
            } else if (List.of(f[1].split(",")).contains("memory")) {
                best = Math.min(best, smallest(root.resolve("memory"), f[2], "memory.limit_in_bytes"));
            }
        }
        return best == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(best);
    }

    /** The smallest value of {@code file} in {@code path}'s cgroup folder under {@code mount} and its ancestors. */
    private static long smallest(Path mount, String path, String file) {
        long best = Long.MAX_VALUE;
        Path dir = mount;
        for (String part : path.split("/")) {
            if (part.isEmpty()) {
                continue;
            }
            dir = dir.resolve(part);
            best = Math.min(best, value(dir.resolve(file)));
        }
        return best;
    }

    private static long value(Path f) {
        try {
            String v = Files.readString(f).trim();
            if (v.equals("max")) {
                return Long.MAX_VALUE;
            }
            long n = Long.parseLong(v);
            return n <= 0 || n >= UNLIMITED_V1 ? Long.MAX_VALUE : n;
        } catch (IOException | RuntimeException e) {
            return Long.MAX_VALUE;                      // not there (another namespace's path, no controller)
        }
    }

    /**
     * The chunk cache for a requested {@code requested} bytes under {@code limit}: at most a quarter of the limit (at
     * least {@value #MIN_CACHE}); under a limit, logs one line saying what it chose and the heap's bound (the JVM's
     * own sizing to the same limit), a warning when the limit cut the cache.
     */
    public static long chunkCacheBytes(long requested, OptionalLong limit) {
        if (limit.isEmpty()) {
            return requested;
        }
        if (requested <= limit.getAsLong() / 4) {                 // the heap's bound is said all the same
            LOG.info("memory limit of this cgroup: " + mib(limit.getAsLong()) + ": chunk cache " + mib(requested)
                    + " as asked, heap at most " + mib(Runtime.getRuntime().maxMemory()));
            return requested;
        }
        long cache = Math.min(requested, Math.max(MIN_CACHE, limit.getAsLong() / 4));
        if (cache < requested) {
            LOG.warning("memory limit of this cgroup: " + mib(limit.getAsLong()) + ": chunk cache " + mib(cache)
                    + " instead of " + mib(requested) + ", heap at most " + mib(Runtime.getRuntime().maxMemory()));
        }
        return cache;
    }

    private static String mib(long bytes) {
        return (bytes >> 20) + " MiB";
    }
}
