package dev.modelfs.cache;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Ref-counted, shared read-only mmaps of blob files: one mapping per key (blob digest).
 *
 * <p>Invariants: at most one live mapping per key; a mapping with open leases is never unmapped;
 * a mapping whose last lease closed stays mapped in an LRU of at most {@code maxIdle} idle
 * mappings (so reopening a hot file costs no syscall) and is unmapped when evicted from it.
 * The expected size is checked against the file before mapping: a shorter or longer file is
 * {@link BlobSizeMismatchException}, a missing one (or one that is no regular file)
 * {@link NoSuchFileException}; a mapping is reused only while it maps the file now at the blob's path,
 * at its size, and no read of it faulted ({@link BlobLease#retireMapping}).
 */
public final class BlobMappings implements AutoCloseable {
    private final Map<String, MappedBlob> live = new HashMap<>();
    private final LinkedHashMap<String, MappedBlob> idle = new LinkedHashMap<>(16, 0.75f, true);
    private final int maxIdle;

    public BlobMappings(int maxIdle) {
        if (maxIdle < 0) {
            throw new IllegalArgumentException("maxIdle < 0");
        }
        this.maxIdle = maxIdle;
    }

    /** Opens the file a mapping is made of (the store's trusted open, {@code NativeFile.openRegular}). */
    @FunctionalInterface
    public interface Opener {
        NativeFile open() throws IOException;
    }

    /**
     * Leases the mapping of {@code path} under {@code key}, mapping it if needed; the file must be a
     * regular file (no ownership check: use {@link #acquire(String, Opener, long)} for store blobs).
     *
     * @param expectedSize the size the manifest promises, or -1 to accept any size
     */
    public BlobLease acquire(String key, Path path, long expectedSize) throws IOException {
        return acquire(key, () -> NativeFile.openRegular(path, path.getParent(), -1), expectedSize);
    }

    /**
     * Leases the mapping under {@code key} of the file {@code opener} opens. The file is opened (and so
     * checked) on every call; an existing mapping is reused only while it is still a mapping of that
     * very file (same device and inode) at that very size, and that size is {@code expectedSize}. A
     * mapping whose blob was truncated, rewritten or replaced is retired (unmapped once its last lease
     * closes) and the file now there is mapped afresh: a new open sees the store as it is now (a size
     * mismatch, a missing blob), never a stale mapping.
     *
     * @param expectedSize the size the manifest promises, or -1 to accept any size
     */
    public BlobLease acquire(String key, Opener opener, long expectedSize) throws IOException {
        NativeFile nf = opener.open();
        NativeFile.Stat st;
        try {
            st = nf.stat();
            synchronized (this) {
                MappedBlob blob = live.get(key);
                if (blob != null && matches(blob, st, expectedSize)) {
                    nf.close();
                    return lease(blob);
                }
                if (blob != null) {
                    retire(blob);
                }
            }
        } catch (IOException | RuntimeException e) {
            nf.close();
            throw e;
        }
        MappedBlob fresh = map(key, nf, st, expectedSize);
        synchronized (this) {
            MappedBlob raced = live.get(key);
            if (raced != null && matches(raced, st, expectedSize)) {   // another thread mapped it meanwhile: keep theirs
                fresh.close();
                return lease(raced);
            }
            if (raced != null) {
                retire(raced);
            }
            live.put(key, fresh);
            return lease(fresh);
        }
    }

    private static boolean matches(MappedBlob blob, NativeFile.Stat now, long expectedSize) {
        return blob.stat().sameFile(now) && now.size() == blob.size() && (expectedSize < 0 || blob.size() == expectedSize);
    }

    private BlobLease lease(MappedBlob blob) {
        if (blob.refs() == 0) {
            idle.remove(blob.key());
        }
        blob.retain();
        return new BlobLease(this, blob);
    }

    /** Takes {@code blob} out of the table after a read of it faulted, if it is still there ({@link BlobLease#retireMapping}). */
    synchronized void retireFaulted(MappedBlob blob) {
        if (live.get(blob.key()) == blob) {
            retire(blob);
        }
    }

    /** Takes {@code blob} out of the table: unmapped now if idle, else when its last lease closes. */
    private void retire(MappedBlob blob) {
        live.remove(blob.key(), blob);
        if (blob.refs() == 0) {
            idle.remove(blob.key(), blob);
            blob.close();
        } else {
            blob.retire();
        }
    }

    /** Maps {@code nf} (whose fstat is {@code st}), taking ownership of it: closed if mapping fails. */
    private static MappedBlob map(String key, NativeFile nf, NativeFile.Stat st, long expectedSize) throws IOException {
        try {
            long size = st.size();
            if (expectedSize >= 0 && size != expectedSize) {
                throw new BlobSizeMismatchException(nf.path(), expectedSize, size);
            }
            Arena arena = Arena.ofShared();
            try {
                MemorySegment seg = size == 0 ? MemorySegment.NULL.reinterpret(0) : nf.map(size, arena);
                return new MappedBlob(key, seg, arena, nf, st);
            } catch (IOException | RuntimeException e) {
                arena.close();
                throw e;
            }
        } catch (IOException | RuntimeException e) {
            nf.close();
            throw e;
        }
    }

    synchronized void release(MappedBlob blob) {
        if (blob.releaseOne() > 0 || blob.closed()) {
            return;
        }
        if (blob.retired()) {
            blob.close();
            return;
        }
        if (maxIdle == 0) {
            live.remove(blob.key(), blob);
            blob.close();
            return;
        }
        idle.put(blob.key(), blob);
        while (idle.size() > maxIdle) {
            var eldest = idle.entrySet().iterator().next();
            idle.remove(eldest.getKey());
            live.remove(eldest.getKey());
            eldest.getValue().close();
        }
    }

    /** Number of mappings currently held (leased or idle). */
    public synchronized int mappedCount() {
        return live.size();
    }

    /** Unmaps every idle mapping; leased ones are unmapped when their last lease closes. */
    public synchronized void evictIdle() {
        for (MappedBlob b : idle.values()) {
            live.remove(b.key());
            b.close();
        }
        idle.clear();
    }

    @Override
    public void close() {
        evictIdle();
    }
}
