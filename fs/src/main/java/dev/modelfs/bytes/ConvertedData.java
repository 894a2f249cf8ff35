package dev.modelfs.bytes;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bytes computed from blob bytes (a dequantized or cast tensor), cut into fixed-size chunks so a
 * read computes only the chunks its range touches.
 *
 * <p>Invariants: {@link #length()} and {@link #chunkBytes()} are fixed; every chunk but the last is
 * exactly {@code chunkBytes()} long; {@link #compute} is deterministic and depends only on the
 * blobs named by {@link #blobs()}; {@link #id()} is unique in the process (it keys the chunk cache).
 */
public abstract class ConvertedData {
    /** Target output bytes per chunk: the one chunk size of converted data (and of read-ahead windows). */
    public static final long CHUNK_TARGET = 1 << 20;

    private static final AtomicLong IDS = new AtomicLong();

    private final long id = IDS.incrementAndGet();

    public final long id() {
        return id;
    }

    /** Total output bytes. */
    public abstract long length();

    /** Output bytes per chunk (the last chunk may be shorter). */
    public abstract long chunkBytes();

    /** The blobs the data is computed from. */
    public abstract List<BlobRef> blobs();

    /** Length of chunk {@code chunk}. */
    public final long chunkLength(long chunk) {
        return Math.min(chunkBytes(), length() - chunk * chunkBytes());
    }

    /**
     * Computes chunk {@code chunk} into {@code out} (exactly {@link #chunkLength} bytes).
     *
     * @param blobs the mapped bytes of each of {@link #blobs()}, in the same order
     */
    public abstract void compute(long chunk, List<MemorySegment> blobs, MemorySegment out);

    /** A short human description for {@code user.modelfs.source}. */
    public abstract String describe();
}
