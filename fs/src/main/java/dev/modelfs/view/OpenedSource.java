package dev.modelfs.view;

import dev.modelfs.cache.BlobLease;
import dev.modelfs.cache.ChunkCache;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * An open file: a {@link ByteSource} plus leases on every blob it reads, so reads never map,
 * resolve or allocate beyond what a converted chunk needs on a cache miss.
 *
 * <p>Invariants: while open, every blob of the source is mapped and its size matched the manifest
 * at open time; {@link #read} is thread-safe; after {@link #close()} reads throw
 * {@link IllegalStateException}. A blob truncated after mapping surfaces as {@link IOException}.
 */
public final class OpenedSource implements AutoCloseable {
    private static final MemorySegment ZEROS = Arena.global().allocate(64 * 1024);

    private final ByteSource source;
    private final ChunkCache chunks;
    private final BlobLease[] leases;
    private final List<BlobRef> refs;
    private volatile boolean closed;
    /** The chunk this file read last: sequential 128 KiB reads stay in one 1 MiB chunk 8 times in a row. */
    private volatile LastChunk last;

    private record LastChunk(long dataId, long chunk, MemorySegment bytes) {}

    private OpenedSource(ByteSource source, ChunkCache chunks, BlobLease[] leases) {
        this.source = source;
        this.chunks = chunks;
        this.leases = leases;
        this.refs = source.blobs();
    }

    /** Opens {@code source}: resolves and maps every blob it reads (fails fast, releasing what it took). */
    public static OpenedSource open(ByteSource source, BlobResolver resolver, ChunkCache chunks) throws IOException {
        List<BlobRef> refs = source.blobs();
        BlobLease[] leases = new BlobLease[refs.size()];
        try {
            for (int i = 0; i < leases.length; i++) {
                leases[i] = resolver.acquire(refs.get(i));
            }
        } catch (IOException | RuntimeException e) {
            for (BlobLease l : leases) {
                if (l != null) {
                    l.close();
                }
            }
            throw e;
        }
        return new OpenedSource(source, chunks, leases);
    }

    public long size() {
        return source.size();
    }

    /** The mapping of {@code ref} (conversions look their blobs up once per chunk computed). */
    private MemorySegment blob(BlobRef ref) {
        return leases[refs.indexOf(ref)].segment();
    }

    /**
     * Copies up to {@code length} bytes at {@code offset} into {@code dst} at {@code dstOffset}.
     *
     * @return bytes copied; 0 at or past end of file
     * @throws IOException when a blob became unreadable (truncated under the mapping) or a
     *                     conversion failed
     */
    public long read(long offset, MemorySegment dst, long dstOffset, long length) throws IOException {
        if (closed) {
            throw new IllegalStateException("read after close");
        }
        long size = source.size();
        if (offset < 0 || length <= 0 || offset >= size) {
            return 0;
        }
        long end = Math.min(size, offset + length);
        long pos = offset;
        int i = source.segmentAt(offset);
        try {
            while (pos < end) {
                Segment seg = source.segment(i);
                long segStart = source.start(i);
                long within = pos - segStart;
                long n = Math.min(end - pos, seg.length() - within);
                long at = dstOffset + (pos - offset);
                switch (seg) {
                    case Segment.Literal l -> MemorySegment.copy(MemorySegment.ofArray(l.bytes()), within, dst, at, n);
                    case Segment.Zeros z -> zero(dst, at, n);
                    case Segment.BlobSlice b -> copyBlob(b, leases[source.blobIndex(i)], within, dst, at, n);
                    case Segment.Converted c -> copyConverted(c.data(), within, dst, at, n);
                }
                pos += n;
                i++;
            }
        } catch (InternalError e) {
            // the JVM turns SIGBUS on a mapping whose file shrank into InternalError
            throw new IOException("blob became unreadable (truncated while mapped): " + e.getMessage(), e);
        }
        return end - offset;
    }

    /** Below this, copy from the mapping; above, {@code pread} into the destination (no page faults on a fresh mapping). */
    private static final long PREAD_MIN = 16 * 1024;

    private static void copyBlob(Segment.BlobSlice b, BlobLease lease, long within, MemorySegment dst, long at, long n)
            throws IOException {
        long pos = b.offset() + within;
        if (n < PREAD_MIN || !dst.isNative()) {
            MemorySegment.copy(lease.segment(), pos, dst, at, n);
            // past a truncation, the rest of the last page reads as zeros instead of faulting: check the size
            if (lease.file().currentSize() < pos + n) {
                throw new IOException("blob " + b.blob().digest().shortId() + " is shorter than its manifest says (truncated while open)");
            }
            return;
        }
        if (lease.file().pread(dst, at, n, pos) < n) {
            throw new IOException("blob " + b.blob().digest().shortId() + " is shorter than its manifest says (truncated while open)");
        }
    }

    private static void zero(MemorySegment dst, long at, long n) {
        while (n > 0) {
            long k = Math.min(n, ZEROS.byteSize());
            MemorySegment.copy(ZEROS, 0, dst, at, k);
            at += k;
            n -= k;
        }
    }

    private void copyConverted(ConvertedData data, long within, MemorySegment dst, long at, long n) throws IOException {
        long chunkBytes = data.chunkBytes();
        while (n > 0) {
            long chunk = within / chunkBytes;
            long inChunk = within - chunk * chunkBytes;
            MemorySegment bytes;
            LastChunk l = last;
            if (l != null && l.dataId() == data.id() && l.chunk() == chunk) {
                bytes = l.bytes();
            } else {
                try {
                    bytes = chunks.get(new ChunkCache.Key(data.id(), chunk), k -> compute(data, k.chunk()));
                } catch (UncheckedIOException e) {
                    throw e.getCause();
                }
                last = new LastChunk(data.id(), chunk, bytes);
            }
            long k = Math.min(n, bytes.byteSize() - inChunk);
            MemorySegment.copy(bytes, inChunk, dst, at, k);
            within += k;
            at += k;
            n -= k;
        }
    }

    private MemorySegment compute(ConvertedData data, long chunk) {
        List<BlobRef> needed = data.blobs();
        List<MemorySegment> segs = new ArrayList<>(needed.size());
        for (BlobRef r : needed) {
            segs.add(blob(r));
        }
        MemorySegment out = MemorySegment.ofArray(new byte[Math.toIntExact(data.chunkLength(chunk))]);
        try {
            data.compute(chunk, segs, out);
        } catch (InternalError e) {
            throw new UncheckedIOException(new IOException("blob became unreadable while converting: " + e.getMessage(), e));
        }
        for (BlobRef r : needed) {      // zeros past a truncation inside the last page do not fault: never cache them
            BlobLease l = leases[refs.indexOf(r)];
            if (l.file().currentSize() < l.segment().byteSize()) {
                throw new UncheckedIOException(new IOException("blob " + r.digest().shortId() + " became shorter while converting"));
            }
        }
        return out;
    }

    /** Carries an IOException through the cache's compute function. */
    private static final class UncheckedIOException extends RuntimeException {
        UncheckedIOException(IOException cause) {
            super(cause);
        }

        @Override
        public synchronized IOException getCause() {
            return (IOException) super.getCause();
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            for (BlobLease l : leases) {
                l.close();
            }
        }
    }
}
