package dev.modelfs.cache;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A read-only mapping of one whole blob file, shared by every reader of that blob.
 *
 * <p>Invariants: {@link #segment()} covers exactly the file's bytes as they were when mapped
 * ({@code segment().byteSize() == size()}); the segment stays valid while at least one lease
 * obtained from {@link BlobMappings#acquire} is open. Reads past a concurrent truncation of the
 * file raise {@link InternalError} (the JVM's SIGBUS translation), which callers turn into EIO.
 */
public final class MappedBlob {
    private final String key;
    private final MemorySegment segment;
    private final Arena arena;
    private final NativeFile file;
    private final NativeFile.Stat stat;
    private int refs;          // guarded by BlobMappings' lock
    private boolean closed;    // guarded by BlobMappings' lock
    private boolean retired;   // guarded by BlobMappings' lock: out of the table, closed by its last release

    MappedBlob(String key, MemorySegment segment, Arena arena, NativeFile file, NativeFile.Stat stat) {
        this.stat = stat;
        this.key = key;
        this.segment = segment;
        this.arena = arena;
        this.file = file;
    }

    /** The open file, for positional reads ({@code pread}) that copy without faulting the mapping in. */
    public NativeFile file() {
        return file;
    }

    /** The file's identity and size when it was mapped. */
    NativeFile.Stat stat() {
        return stat;
    }

    /** The cache key (a blob digest) this mapping belongs to. */
    public String key() {
        return key;
    }

    /** The mapped bytes; valid while a lease is held. */
    public MemorySegment segment() {
        return segment;
    }

    public long size() {
        return segment.byteSize();
    }

    int refs() {
        return refs;
    }

    void retain() {
        refs++;
    }

    int releaseOne() {
        return --refs;
    }

    boolean retired() {
        return retired;
    }

    void retire() {
        retired = true;
    }

    boolean closed() {
        return closed;
    }

    void close() {
        if (!closed) {
            closed = true;
            arena.close();
            file.close();
        }
    }
}
