package dev.modelfs.read;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.bytes.Segment;
import dev.modelfs.cache.BlobLease;
import dev.modelfs.cache.MappedPages;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.cache.TruncatedMapping;
import dev.modelfs.telemetry.CpuClock;
import dev.modelfs.telemetry.FileKind;
import dev.modelfs.telemetry.Telemetry;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An open file: a {@link ByteSource} plus leases on every blob it reads, so reads never map,
 * resolve or allocate beyond what a converted chunk needs on a cache miss.
 *
 * <p>Invariants: while open, every blob of the source is mapped and its size matched the manifest
 * at open time; {@link #read} is thread-safe; after {@link #close()} reads throw
 * {@link IllegalStateException}. A blob truncated after mapping surfaces as {@link IOException}.
 * The leases are released when the file is closed and no {@link ReadAhead} task still converts from it
 * (tasks {@link #pin()} the file). A sequential reader of converted bytes gets the chunks ahead of it
 * converted on the {@link ReadAhead} pool.
 */
public final class OpenedSource implements AutoCloseable {
    private static final MemorySegment ZEROS = Arena.global().allocate(64 * 1024);

    private final ByteSource source;
    private final ChunkCache chunks;
    private final ReadAhead readAhead;
    private final BlobLease[] leases;
    private final List<BlobRef> refs;
    private final Telemetry telemetry;
    /** Runs once, after the leases are released (the last hold let go). */
    private final Runnable released;
    private volatile boolean closed;
    /** 1 for the open file itself, plus one per running read-ahead task; 0 = leases released. */
    private final AtomicInteger pins = new AtomicInteger(1);
    /** The chunk this file read last, held: sequential 128 KiB reads stay in one 1 MiB chunk 8 times in a row. */
    private final AtomicReference<ChunkCache.Chunk> last = new AtomicReference<>();
    /** End offset of the previous read (sequential-reader detection for read-ahead). */
    private volatile long lastEnd;

    private OpenedSource(ByteSource source, ChunkCache chunks, ReadAhead readAhead, BlobLease[] leases, Telemetry telemetry,
                         Runnable released) {
        this.source = source;
        this.released = released;
        this.telemetry = telemetry;
        this.chunks = chunks;
        this.readAhead = readAhead;
        this.leases = leases;
        this.refs = source.blobs();
    }

    /** Opens {@code source} without read-ahead. */
    public static OpenedSource open(ByteSource source, BlobResolver resolver, ChunkCache chunks) throws IOException {
        return open(source, resolver, chunks, ReadAhead.NONE);
    }

    /** Opens {@code source} with read-ahead, reporting no conversions. */
    public static OpenedSource open(ByteSource source, BlobResolver resolver, ChunkCache chunks, ReadAhead readAhead)
            throws IOException {
        return open(source, resolver, chunks, readAhead, Telemetry.NONE);
    }

    /**
     * Opens {@code source}: resolves and maps every blob it reads (fails fast, releasing what it took);
     * each chunk it converts is reported to {@code telemetry}.
     */
    public static OpenedSource open(ByteSource source, BlobResolver resolver, ChunkCache chunks, ReadAhead readAhead,
                                    Telemetry telemetry) throws IOException {
        return open(source, resolver, chunks, readAhead, telemetry, () -> { });
    }

    /**
     * Like {@link #open(ByteSource, BlobResolver, ChunkCache, ReadAhead, Telemetry)}; {@code released} runs once when
     * the file is closed and no read-ahead task holds it any more (after its leases are let go), not when the open fails.
     */
    public static OpenedSource open(ByteSource source, BlobResolver resolver, ChunkCache chunks, ReadAhead readAhead,
                                    Telemetry telemetry, Runnable released) throws IOException {
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
        return new OpenedSource(source, chunks, readAhead, leases, telemetry, released);
    }

    public long size() {
        return source.size();
    }

    /** One blob file on disk: the blob it holds, and its device and inode (a blob deleted and written again is another). */
    public record BlobFile(BlobRef blob, long device, long inode) {}

    /** The file holding segment {@code segment}'s blob, as leased by this open file (as it was when mapped). */
    public BlobFile blobFile(int segment) {
        var st = leases[source.blobIndex(segment)].stat();
        return new BlobFile(refs.get(source.blobIndex(segment)), st.dev(), st.ino());
    }

    /** What the file's bytes are ({@link ByteSource#kind()}). */
    public FileKind kind() {
        return source.kind();
    }

    /**
     * After a fault on one of this file's mappings: the next open maps its blobs afresh (the disk may give the pages
     * again, or the file now at the path may be another), while this open file keeps its mappings until closed.
     */
    private void retireMappings() {
        for (BlobLease l : leases) {
            l.retireMapping();
        }
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
        long previousEnd = lastEnd;
        lastEnd = end;
        boolean sequential = offset == 0 || (offset >= previousEnd - READ_AHEAD_SLACK && offset <= previousEnd + READ_AHEAD_SLACK);
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
                    case Segment.Converted c -> copyConverted(c.data(), within, dst, at, n, sequential ? pos : -1);
                }
                pos += n;
                i++;
            }
        } catch (InternalError e) {
            retireMappings();
            throw TruncatedMapping.of("read at " + offset, e);
        }
        return end - offset;
    }

    /**
     * The segment holding {@code [offset, offset + length)}, clipped to the end of the file, when that range
     * lies within one blob slice and the blob is still long enough ({@code fstat} now): the read can then hand
     * the kernel the blob's descriptor and position ({@link #blobDescriptor}, {@link #blobPosition}: {@code splice})
     * instead of copying. Returns -1 otherwise (other kinds of segment, a range across segments, at or past
     * the end, a truncated blob: {@link #read} serves or fails those). The range's segment is searched once.
     */
    public int blobSegment(long offset, long length) {
        long size = source.size();
        if (closed || offset < 0 || length <= 0 || offset >= size) {
            return -1;
        }
        long end = Math.min(size, offset + length);
        int i = source.segmentAt(offset);
        long within = offset - source.start(i);
        if (!(source.segment(i) instanceof Segment.BlobSlice b) || end - offset > b.length() - within) {
            return -1;
        }
        if (leases[source.blobIndex(i)].file().currentSize() < b.offset() + within + (end - offset)) {
            return -1;                                          // truncated: read() reports it
        }
        lastEnd = end;
        return i;
    }

    /** The position in its blob of file offset {@code offset}, which lies in segment {@code segment} ({@link #blobSegment}). */
    public long blobPosition(int segment, long offset) {
        Segment.BlobSlice b = (Segment.BlobSlice) source.segment(segment);
        return b.offset() + (offset - source.start(segment));
    }

    /** The descriptor of the blob of segment {@code segment} ({@link #blobSegment}), valid until {@link #close()}. */
    public int blobDescriptor(int segment) {
        return leases[source.blobIndex(segment)].file().descriptor();
    }

    /**
     * Blob bytes go into a native destination (FUSE and NFS buffers) with one {@code pread(2)}: exact (a short
     * count is a truncated blob), no page faults on a fresh mapping, no allocation. A heap destination copies
     * from the mapping, then checks the blob's size, because past a truncation the rest of the last page
     * reads as zeros instead of faulting.
     */
    private static void copyBlob(Segment.BlobSlice b, BlobLease lease, long within, MemorySegment dst, long at, long n)
            throws IOException {
        long pos = b.offset() + within;
        boolean whole;
        if (dst.isNative()) {
            whole = lease.file().pread(dst, at, n, pos) == n;
        } else {                // a heap destination: copied from the mapping, its pages first brought in from native code
            MappedPages.populate(lease.segment(), pos, pos + n);
            MemorySegment.copy(lease.segment(), pos, dst, at, n);
            whole = lease.file().currentSize() >= pos + n;
        }
        if (!whole) {
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

    /** How far a read may start from the previous read's end and still count as sequential (kernel read-ahead reorders). */
    private static final long READ_AHEAD_SLACK = 2L << 20;

    /**
     * Copies converted bytes; {@code filePos >= 0} (a sequential reader at that file offset) asks for the
     * chunks ahead when the read enters a new chunk.
     */
    private void copyConverted(ConvertedData data, long within, MemorySegment dst, long at, long n, long filePos)
            throws IOException {
        long chunkBytes = data.chunkBytes();
        while (n > 0) {
            long chunk = within / chunkBytes;
            long inChunk = within - chunk * chunkBytes;
            ChunkCache.Chunk c = last.get();
            if (c == null || !c.is(data.id(), chunk) || !c.tryAcquire()) {
                if (filePos >= 0) {
                    requestAhead(filePos);
                }
                try {
                    c = chunks.acquire(new ChunkCache.Key(data.id(), chunk), diskName(data, chunk), data.chunkLength(chunk),
                            new Fill(data, chunk));
                } catch (UncheckedIOException e) {
                    throw e.getCause();
                }
                if (c.tryAcquire()) {                   // one more hold for `last`
                    ChunkCache.Chunk old = last.getAndSet(c);
                    if (old != null) {
                        old.release();
                    }
                }
            }
            try {
                long k = Math.min(n, c.bytes().byteSize() - inChunk);
                MemorySegment.copy(c.bytes(), inChunk, dst, at, k);
                within += k;
                at += k;
                n -= k;
            } finally {
                c.release();
            }
        }
    }

    /** Asks the read-ahead pool for every converted chunk in the window after file offset {@code pos}. */
    /**
     * Chunks a miss may ask the read-ahead pool for: the window's worth for 1 MiB chunks, and a bound on the
     * work (and garbage) per miss when a file is thousands of tiny tensors of one chunk each.
     */
    private static final int AHEAD_CHUNKS_PER_MISS = 32;

    private void requestAhead(long pos) {
        long until = Math.min(source.size(), pos + readAhead.windowBytes());
        if (until <= pos) {
            return;
        }
        int budget = AHEAD_CHUNKS_PER_MISS;      // files of many tiny tensors: O(1) work per miss, not O(window)
        for (int i = source.segmentAt(pos); i < source.segmentCount() && source.start(i) < until && budget > 0; i++) {
            if (source.segment(i) instanceof Segment.Converted conv) {
                ConvertedData d = conv.data();
                long from = Math.max(pos, source.start(i)) - source.start(i);
                long to = Math.min(until - source.start(i), d.length());
                for (long ch = from / d.chunkBytes(); ch * d.chunkBytes() < to && budget > 0; ch++, budget--) {
                    readAhead.request(this, d, ch, chunks);
                }
            }
        }
    }

    /** Converts chunk {@code chunk} of {@code data} into the cache (a read-ahead task; the file is pinned). */
    void convertAhead(ConvertedData data, long chunk) {
        chunks.acquire(new ChunkCache.Key(data.id(), chunk), diskName(data, chunk), data.chunkLength(chunk),
                new Fill(data, chunk)).release();
    }

    /** The chunk's name in the disk tier, or null without one (no string is made then). */
    private String diskName(ConvertedData data, long chunk) {
        return chunks.disk() == null ? null : data.persistentName(chunk);
    }

    /**
     * Converts one chunk for the cache, under a hold of the file: the cache may call it after the read that asked
     * for it has ended (the disk tier's backlog, on its writer thread), which {@link #retain retains} the file
     * meanwhile; without a hold (every one let go) it fails instead of reading leases let go of.
     */
    private final class Fill implements ChunkCache.RetainableFill {
        private final ConvertedData data;
        private final long chunk;

        Fill(ConvertedData data, long chunk) {
            this.data = data;
            this.chunk = chunk;
        }

        @Override
        public void accept(MemorySegment out) {
            if (!hold()) {
                throw new UncheckedIOException(new IOException(data.describe() + ": file closed"));
            }
            try {
                compute(data, chunk, out);
            } finally {
                unpin();
            }
        }

        @Override
        public boolean retain() {
            return hold();
        }

        @Override
        public void release() {
            unpin();
        }
    }

    private void compute(ConvertedData data, long chunk, MemorySegment out) {
        List<BlobRef> needed = data.blobs();
        List<MemorySegment> segs = new ArrayList<>(needed.size());
        for (BlobRef r : needed) {
            segs.add(blob(r));
        }
        long cpu = CpuClock.threadNanos();
        try {
            data.compute(chunk, segs, out);
        } catch (InternalError e) {
            retireMappings();
            throw new UncheckedIOException(TruncatedMapping.of("converting " + data.describe() + " chunk " + chunk, e));
        }
        for (BlobRef r : needed) {      // zeros past a truncation inside the last page do not fault: never cache them
            BlobLease l = leases[refs.indexOf(r)];
            if (l.file().currentSize() < l.segment().byteSize()) {
                throw new UncheckedIOException(new IOException("blob " + r.digest().shortId() + " became shorter while converting"));
            }
        }
        telemetry.conversion(CpuClock.threadNanos() - cpu);
    }

    /** Takes a hold on the file's leases unless it is closed (read-ahead tasks). */
    boolean pin() {
        return !closed && hold();
    }

    /**
     * Takes one more hold while any is held, closed or not (the leases are still mapped then): for work that runs on
     * behalf of a reader or task that may have let go since it asked for it.
     */
    private boolean hold() {
        for (int p = pins.get(); p > 0; p = pins.get()) {
            if (pins.compareAndSet(p, p + 1)) {
                return true;
            }
        }
        return false;
    }

    /** Lets go of a hold; the last one releases the leases and the last chunk. */
    void unpin() {
        if (pins.decrementAndGet() == 0) {
            ChunkCache.Chunk c = last.getAndSet(null);
            if (c != null) {
                c.release();
            }
            for (BlobLease l : leases) {
                l.close();
            }
            released.run();
        }
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
            unpin();
        }
    }
}
