package dev.modelfs.cache;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
 * {@link BlobSizeMismatchException}, a missing one {@link NoSuchFileException}.
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

    /**
     * Leases the mapping of {@code path} under {@code key}, mapping it if needed.
     *
     * @param expectedSize the size the manifest promises, or -1 to accept any size
     */
    public BlobLease acquire(String key, Path path, long expectedSize) throws IOException {
        synchronized (this) {
            MappedBlob blob = live.get(key);
            if (blob != null) {
                if (blob.refs() == 0) {
                    idle.remove(key);
                }
                blob.retain();
                return new BlobLease(this, blob);
            }
        }
        MappedBlob fresh = map(key, path, expectedSize);
        synchronized (this) {
            MappedBlob raced = live.get(key);
            if (raced != null) {          // another thread mapped it meanwhile: keep theirs
                fresh.close();
                if (raced.refs() == 0) {
                    idle.remove(key);
                }
                raced.retain();
                return new BlobLease(this, raced);
            }
            live.put(key, fresh);
            fresh.retain();
            return new BlobLease(this, fresh);
        }
    }

    private static MappedBlob map(String key, Path path, long expectedSize) throws IOException {
        FileChannel ch = FileChannel.open(path, StandardOpenOption.READ);
        NativeFile nf = null;
        try {
            long size = ch.size();
            if (expectedSize >= 0 && size != expectedSize) {
                throw new BlobSizeMismatchException(path, expectedSize, size);
            }
            Arena arena = Arena.ofShared();
            try {
                MemorySegment seg = size == 0 ? MemorySegment.NULL.reinterpret(0)
                        : ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
                nf = new NativeFile(path);
                return new MappedBlob(key, seg, arena, nf);
            } catch (IOException | RuntimeException e) {
                arena.close();
                throw e;
            }
        } catch (IOException | RuntimeException e) {
            if (nf != null) {
                nf.close();
            }
            throw e;
        } finally {
            ch.close();     // the mapping and the native descriptor outlive the channel
        }
    }

    synchronized void release(MappedBlob blob) {
        if (blob.releaseOne() > 0 || blob.closed()) {
            return;
        }
        if (maxIdle == 0) {
            live.remove(blob.key());
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
