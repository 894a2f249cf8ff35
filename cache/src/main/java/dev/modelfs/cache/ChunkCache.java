package dev.modelfs.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Converted-chunk cache: (source id, chunk index) to the chunk's bytes in native memory, bounded by
 * total bytes, with reference counts so a chunk evicted while a reader copies from it is recycled only
 * after that reader lets go.
 *
 * <p>Invariants: a chunk's bytes are immutable once published; the sum of the buffers of cached chunks
 * (a chunk holds a pooled buffer of the smallest of three size classes, 4 KiB, 64 KiB and 1 MiB,
 * that fits it) stays within {@code maxBytes} (Caffeine's weighted eviction, amortized); a chunk is computed at most once
 * at a time per key (concurrent readers of the same chunk wait for one computation); buffers of at
 * most {@link #BUFFER_BYTES} come from per-class pools and go back to it when the cache and every reader have
 * released them, so native memory stays near {@code maxBytes} plus the chunks readers hold, and is
 * not on the Java heap (no garbage, no heap growth while streaming); {@link #close()} frees it all.
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

    private final Cache<Key, Chunk> cache;
    private final long maxBytes;
    private final Arena arena = Arena.ofShared();
    @SuppressWarnings("unchecked")
    private final ConcurrentLinkedQueue<MemorySegment>[] pools = new ConcurrentLinkedQueue[CLASS_BYTES.length];
    private volatile boolean closed;

    public ChunkCache(long maxBytes) {
        for (int i = 0; i < pools.length; i++) {
            pools[i] = new ConcurrentLinkedQueue<>();
        }
        this.maxBytes = Math.max(0, maxBytes);
        this.cache = Caffeine.newBuilder()
                .recordStats()                              // LongAdders: no allocation per lookup
                .maximumWeight(this.maxBytes)
                .weigher((Key k, Chunk v) -> (int) Math.min(Integer.MAX_VALUE, v.buffer.byteSize()))   // memory held, not chunk length
                .executor(Runnable::run)
                .removalListener((Key k, Chunk v, RemovalCause cause) -> {
                    if (v != null) {
                        v.release();
                    }
                })
                .build();
    }

    /**
     * The chunk for {@code key}, held for the caller (who must {@link Chunk#release()} it); on a miss
     * {@code fill} writes its {@code length} bytes into the segment it is given. An exception from
     * {@code fill} propagates and caches nothing.
     */
    public Chunk acquire(Key key, long length, Consumer<MemorySegment> fill) {
        Chunk[] made = new Chunk[1];
        while (true) {
            Chunk c = cache.get(key, k -> made[0] = compute(k, length, fill));
            if (c == made[0] || c.tryAcquire()) {   // a chunk made here is born held (it may be evicted at once)
                return c;
            }
            cache.asMap().remove(key, c);           // recycled between lookup and hold: evicted meanwhile, look again
        }
    }

    /** Whether {@code key} is cached now (a read-ahead hint; no hold is taken, not counted as a lookup). */
    public boolean contains(Key key) {
        return cache.asMap().containsKey(key);
    }

    /** The figures now (for metrics: a few counter reads, no lock). */
    public Stats stats() {
        var s = cache.stats();
        long bytes = cache.policy().eviction().map(e -> e.weightedSize().orElse(0)).orElse(0L);
        return new Stats(s.hitCount(), s.missCount(), s.evictionCount(), bytes, maxBytes);
    }

    private Chunk compute(Key k, long length, Consumer<MemorySegment> fill) {
        MemorySegment buf = buffer(length);
        try {
            MemorySegment dst = buf.asSlice(0, length);
            fill.accept(dst);
        } catch (RuntimeException | Error e) {
            recycle(buf);
            throw e;
        }
        Chunk c = new Chunk(this, k.sourceId(), k.chunk(), buf, length);
        c.refs.incrementAndGet();                    // the caller's hold
        return c;
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
        return b != null ? b : arena.allocate(CLASS_BYTES[c], Math.min(4096, CLASS_BYTES[c]));
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
            cache.invalidateAll();
            closed = true;
            for (ConcurrentLinkedQueue<MemorySegment> p : pools) {
                p.clear();
            }
            arena.close();
        }
    }
}
