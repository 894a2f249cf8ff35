package dev.modelfs.cache;

import java.lang.foreign.MemorySegment;

/**
 * One reader's hold on a {@link MappedBlob}. While the lease is open the mapping cannot be
 * unmapped; {@link #close()} is idempotent and gives the hold back.
 */
public final class BlobLease implements AutoCloseable {
    private final BlobMappings owner;
    private final MappedBlob blob;
    private boolean closed;

    BlobLease(BlobMappings owner, MappedBlob blob) {
        this.owner = owner;
        this.blob = blob;
    }

    /** The mapped bytes of the whole blob. */
    public MemorySegment segment() {
        return blob.segment();
    }

    /** The blob's open file, for positional reads. */
    public NativeFile file() {
        return blob.file();
    }

    /** The file's identity and size when it was mapped (the mapping is reused only while they hold). */
    public NativeFile.Stat stat() {
        return blob.stat();
    }

    /**
     * Retires this lease's mapping after a read of it faulted (a page the disk could not give, SEMANTICS.md "When the
     * store's disk fails"): the next {@link BlobMappings#acquire} maps the file afresh even when it is the same file at
     * the same size; this lease and the others on the mapping keep it until they close.
     */
    public void retireMapping() {
        owner.retireFaulted(blob);
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            owner.release(blob);
        }
    }
}
