package dev.modelfs.cache;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * Converted-chunk cache: (source id, chunk index) to the chunk's bytes in native memory, bounded by
 * total bytes, with reference counts so a chunk evicted while a reader copies from it is recycled only
 * after that reader lets go.
 *
 * <p>Invariants: a chunk's bytes are immutable once published; the sum of the buffers of cached chunks
 * (a chunk holds a pooled buffer of the smallest of three size classes, 4 KiB, 64 KiB and 1 MiB,
 * that fits it) stays within {@code maxBytes} (least recently used chunks are evicted first); a chunk is computed at most once
 * at a time per key (concurrent readers of the same chunk wait for one computation); buffers of at
 * most {@link #BUFFER_BYTES} come from per-class pools and go back to it when the cache and every reader have
 * released them, so native memory stays near {@code maxBytes} plus the chunks readers hold, and is
 * not on the Java heap (no garbage, no heap growth while streaming); {@link #close()} frees it all.
 *
 * <p>Eviction is plain LRU, not a frequency-based policy such as Caffeine's W-TinyLFU: a chunk converted
 * ahead of a sequential reader has been used once (by nobody yet) when it is inserted, and an admission
 * policy that compares use counts rejects it in favour of chunks readers already consumed, so read-ahead
 * converted most chunks twice once the cache was full (BENCHMARKS.md, "Read-ahead and the chunk cache").
 * With LRU a chunk stays at least until {@code maxBytes} of newer chunks have been inserted, far more than a
 * read-ahead window.
 *
 * <p>With a {@link DiskChunkStore} (optional), a miss of a chunk that has a persistent name first
 * looks on disk and only converts when the disk has no valid copy; a converted chunk is then written
 * there in the background. {@link #conversions()} counts the calls of {@code fill}: with N readers of
 * the same chunks at once it grows by one per chunk, not N.
 */
public final class ChunkCache implements AutoCloseable {
    /** Pooled buffer size: the largest chunk the pool serves (bigger ones get buffers of their own). */
    public static final long BUFFER_BYTES = 1 << 20;

    /**
     * The cache's figures since it was made: lookups that found the chunk ({@code hits}) and that had to
     * compute it ({@code misses}), chunks evicted for space, the bytes of native memory the cached chunks
     * hold now and the bound on them.
     */
    public record Stats(long hits, long misses, long evictions, long bytes, long capacityBytes) {}

    /** Cache key: a converted source's process-unique id and a chunk index inside it. */
    public record Key(long sourceId, long chunk) {}

    /**
     * A cached chunk. Readers hold it between {@link ChunkCache#acquire} (or a successful
     * {@link #tryAcquire}) and {@link #release()}; its bytes stay valid while held.
     */
    public static final class Chunk {
        private final ChunkCache owner;
        private final long sourceId;
        private final long chunk;
        private final MemorySegment buffer;
        private final MemorySegment bytes;
        /** 1 for the cache's own reference while cached, plus one per holder; 0 = recycled. */
        private final AtomicInteger refs = new AtomicInteger(1);

        private Chunk(ChunkCache owner, long sourceId, long chunk, MemorySegment buffer, long length) {
            this.owner = owner;
            this.sourceId = sourceId;
            this.chunk = chunk;
            this.buffer = buffer;
            this.bytes = buffer.asSlice(0, length);
        }

        /** The chunk's bytes (valid while held). */
        public MemorySegment bytes() {
            return bytes;
        }

        /** Whether this is chunk {@code chunk} of source {@code sourceId}. */
        public boolean is(long sourceId, long chunk) {
            return this.sourceId == sourceId && this.chunk == chunk;
        }

        /** Takes one more hold on the chunk, unless it was already recycled. */
        public boolean tryAcquire() {
            for (int r = refs.get(); r > 0; r = refs.get()) {
                if (refs.compareAndSet(r, r + 1)) {
                    return true;
                }
            }
            return false;
        }

        /** Lets go of one hold; the last one returns the buffer to the pool. */
        public void release() {
            if (refs.decrementAndGet() == 0) {
                owner.recycle(buffer);
            }
        }
    }

    /** Buffer size classes, smallest first: a chunk gets the smallest class that holds it. */
    private static final long[] CLASS_BYTES = {4 << 10, 64 << 10, BUFFER_BYTES};

    /** Cached chunks, least recently used first; guarded by {@link #lock}. */
    private final LinkedHashMap<Key, Chunk> lru = new LinkedHashMap<>(256, 0.75f, true);
    /** Bytes of the buffers of the chunks in {@link #lru}; guarded by {@link #lock}. */
    private long weight;
    private final ReentrantLock lock = new ReentrantLock();
    /** Chunks being computed now, so that concurrent readers of one chunk wait for one computation. */
    private final ConcurrentHashMap<Key, CompletableFuture<Chunk>> computing = new ConcurrentHashMap<>();
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder evictions = new LongAdder();
    private final long maxBytes;
    private final Arena arena = Arena.ofShared();
    @SuppressWarnings("unchecked")
    private final ConcurrentLinkedQueue<MemorySegment>[] pools = new ConcurrentLinkedQueue[CLASS_BYTES.length];
    /** Where fresh 1 MiB buffers come from first (null: none reserved). */
    private final BufferSlab slab;
    private final DiskChunkStore disk;
    private final LongAdder conversions = new LongAdder();
    private volatile boolean closed;

    /** A cache of at most {@code maxBytes} of chunks in memory, with no disk tier. */
    public ChunkCache(long maxBytes) {
        this(maxBytes, null);
    }

    /**
     * A cache of at most {@code maxBytes} of chunks in memory over {@code disk} (null: none); the
     * cache closes the disk store when it is closed.
     */
    public ChunkCache(long maxBytes, DiskChunkStore disk) {
        this.disk = disk;
        for (int i = 0; i < pools.length; i++) {
            pools[i] = new ConcurrentLinkedQueue<>();
        }
        this.maxBytes = Math.max(0, maxBytes);
        this.slab = BufferSlab.reserve(this.maxBytes / BUFFER_BYTES, BUFFER_BYTES, arena);
    }

    /**
     * The chunk for {@code key}, held for the caller (who must {@link Chunk#release()} it); on a miss
     * {@code fill} writes its {@code length} bytes into the segment it is given. An exception from
     * {@code fill} propagates and caches nothing.
     */
    public Chunk acquire(Key key, long length, Consumer<MemorySegment> fill) {
        return acquire(key, null, length, fill);
    }

    /**
     * Like {@link #acquire(Key, long, Consumer)}; {@code persistentName} (null: none) names the chunk in
     * the disk tier: the same name in every process must mean the same bytes.
     */
    public Chunk acquire(Key key, String persistentName, long length, Consumer<MemorySegment> fill) {
        while (true) {
            Chunk c = lookup(key);
            if (c != null) {
                hits.increment();
                return c;
            }
            CompletableFuture<Chunk> mine = new CompletableFuture<>();
            CompletableFuture<Chunk> other = computing.putIfAbsent(key, mine);
            if (other != null) {
                Chunk o = awaitOther(other);
                if (o != null && o.tryAcquire()) {
                    hits.increment();
                    return o;
                }
                continue;                            // it failed or was recycled already: look again
            }
            try {
                c = lookup(key);                     // inserted between the lookup and the reservation
                if (c == null) {
                    misses.increment();
                    c = compute(key, persistentName, length, fill);
                    insert(key, c);
                } else {
                    hits.increment();
                }
                mine.complete(c);
                return c;
            } catch (RuntimeException | Error e) {
                mine.completeExceptionally(e);
                throw e;
            } finally {
                computing.remove(key, mine);
            }
        }
    }

    /** The chunk another reader computed, or null if its computation failed (the caller then tries itself). */
    private static Chunk awaitOther(CompletableFuture<Chunk> other) {
        try {
            return other.join();
        } catch (CompletionException | java.util.concurrent.CancellationException e) {
            return null;
        }
    }

    /** The cached chunk for {@code key}, held for the caller and made most recently used; or null. */
    private Chunk lookup(Key key) {
        lock.lock();
        try {
            Chunk c = lru.get(key);
            return c != null && c.tryAcquire() ? c : null;   // a cached chunk holds the cache's reference: never recycled
        } finally {
            lock.unlock();
        }
    }

    /** Caches {@code c} as most recently used and evicts least recently used chunks beyond {@code maxBytes}. */
    private void insert(Key key, Chunk c) {
        lock.lock();
        try {
            if (closed) {
                c.release();                         // the cache's reference: the caller's hold keeps the bytes
                return;
            }
            Chunk old = lru.put(key, c);
            weight += c.buffer.byteSize();
            if (old != null) {                       // cannot happen while one computation per key runs; kept safe
                weight -= old.buffer.byteSize();
                old.release();
            }
            for (Iterator<Map.Entry<Key, Chunk>> it = lru.entrySet().iterator(); weight > maxBytes && it.hasNext(); ) {
                Chunk evicted = it.next().getValue();
                it.remove();
                weight -= evicted.buffer.byteSize();
                evictions.increment();
                evicted.release();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Whether {@code key} is cached now (a read-ahead hint; no hold is taken, not counted as a lookup, not a use). */
    public boolean contains(Key key) {
        lock.lock();
        try {
            return lru.containsKey(key);
        } finally {
            lock.unlock();
        }
    }

    /** The figures now (for metrics). */
    public Stats stats() {
        lock.lock();
        try {
            return new Stats(hits.sum(), misses.sum(), evictions.sum(), weight, maxBytes);
        } finally {
            lock.unlock();
        }
    }

    /** The disk tier, or null. */
    public DiskChunkStore disk() {
        return disk;
    }

    /** How many chunks were converted ({@code fill} called) since this cache was made. */
    public long conversions() {
        return conversions.sum();
    }

    private Chunk compute(Key k, String persistentName, long length, Consumer<MemorySegment> fill) {
        MemorySegment buf = buffer(length);
        boolean fromDisk = false;
        try {
            MemorySegment dst = buf.asSlice(0, length);
            fromDisk = disk != null && persistentName != null && disk.read(persistentName, dst);
            if (!fromDisk) {
                conversions.increment();
                fill.accept(dst);
            }
        } catch (RuntimeException | Error e) {
            recycle(buf);
            throw e;
        }
        Chunk c = new Chunk(this, k.sourceId(), k.chunk(), buf, length);
        c.refs.incrementAndGet();                    // the caller's hold
        if (disk != null && persistentName != null && !fromDisk) {
            disk.writeLater(persistentName, c, new Backfill(k, persistentName, length, fill));
        }
        return c;
    }

    /**
     * A fill that can keep what it reads from (a file's mapped blobs) for a later call: the disk tier's backlog
     * ({@link DiskChunkStore.Later}) converts a chunk once more after its reader has gone.
     */
    public interface RetainableFill extends Consumer<MemorySegment> {
        /** Takes one more hold of what {@link #accept} reads; false when it is gone. */
        boolean retain();

        /** Lets go of a hold {@link #retain} took. */
        void release();
    }

    /**
     * A chunk the disk tier's full write queue turned away, written later by its writer thread: from memory while
     * it is cached (that counts as a use), else by converting it once more into a pooled buffer that goes back to
     * the pool afterwards. The fill is retained meanwhile when it is a {@link RetainableFill}; any other fill must
     * stay callable as long as the cache.
     */
    private final class Backfill implements DiskChunkStore.Later {
        private final Key key;
        private final String name;
        private final long length;
        private final Consumer<MemorySegment> fill;

        Backfill(Key key, String name, long length, Consumer<MemorySegment> fill) {
            this.key = key;
            this.name = name;
            this.length = length;
            this.fill = fill;
        }

        @Override
        public boolean keep() {
            return !(fill instanceof RetainableFill r) || r.retain();
        }

        @Override
        public boolean write() {
            Chunk c = lookup(key);
            if (c != null) {
                try {
                    return disk.write(name, c.bytes());
                } finally {
                    c.release();
                }
            }
            MemorySegment buf = buffer(length);
            try {
                MemorySegment dst = buf.asSlice(0, length);
                fill.accept(dst);
                conversions.increment();
                return disk.write(name, dst);
            } finally {
                recycle(buf);
            }
        }

        @Override
        public void drop() {
            if (fill instanceof RetainableFill r) {
                r.release();
            }
        }
    }

    private MemorySegment buffer(long length) {
        if (closed) {
            throw new IllegalStateException("chunk cache closed");
        }
        if (length > BUFFER_BYTES) {
            return Arena.ofAuto().allocate(length, 64);     // never happens for 1 MiB chunks; freed by the GC
        }
        int c = sizeClass(length);
        MemorySegment b = pools[c].poll();
        if (b == null && CLASS_BYTES[c] == BUFFER_BYTES && slab != null) {
            b = slab.next();
        }
        return b != null ? b : arena.allocate(CLASS_BYTES[c], Math.min(4096, CLASS_BYTES[c]));
    }

    /**
     * Faults in up to {@code bytes} of pooled buffers now (whole buffers, within the cache's size) and returns how
     * many bytes that was: the first conversions then write into memory the kernel has already handed over, as on a
     * mount that has been reading for a while, instead of faulting each 4 KiB page in on the reader's time. Those
     * bytes stay resident (they count in the cache's size, which bounds them).
     */
    public long prefault(long bytes) {
        if (closed || slab == null || bytes < BUFFER_BYTES) {
            return 0;
        }
        List<MemorySegment> buffers = slab.nextPopulated((int) Math.min(Integer.MAX_VALUE, bytes / BUFFER_BYTES));
        int last = CLASS_BYTES.length - 1;
        buffers.forEach(pools[last]::offer);
        return buffers.size() * BUFFER_BYTES;
    }

    private static int sizeClass(long length) {
        int c = 0;
        while (CLASS_BYTES[c] < length) {
            c++;
        }
        return c;
    }

    private void recycle(MemorySegment buf) {
        if (!closed) {
            for (int c = 0; c < CLASS_BYTES.length; c++) {
                if (buf.byteSize() == CLASS_BYTES[c]) {
                    pools[c].offer(buf);
                    return;
                }
            }
        }
    }

    /** Drops every chunk and frees the native memory; no reader may hold a chunk any more. */
    @Override
    public synchronized void close() {
        if (!closed) {
            if (disk != null) {
                disk.close();               // finishes (or drops) queued writes, which hold their chunks
            }
            lock.lock();
            try {
                closed = true;
                lru.values().forEach(Chunk::release);
                lru.clear();
                weight = 0;
            } finally {
                lock.unlock();
            }
            for (ConcurrentLinkedQueue<MemorySegment> p : pools) {
                p.clear();
            }
            arena.close();
        }
    }
}
