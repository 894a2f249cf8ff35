package dev.modelfs.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.lang.foreign.MemorySegment;
import java.util.function.Function;

/**
 * Converted-chunk cache: (source id, chunk index) to the chunk's bytes, bounded by total bytes.
 *
 * <p>Invariants: values are immutable once published; the sum of cached chunk sizes stays within
 * {@code maxBytes} (Caffeine's weighted eviction); a chunk is computed at most once at a time per
 * key (concurrent readers of the same chunk wait for one computation).
 */
public final class ChunkCache {
    /** Cache key: a converted source's process-unique id and a chunk index inside it. */
    public record Key(long sourceId, long chunk) {}

    private final Cache<Key, MemorySegment> cache;

    public ChunkCache(long maxBytes) {
        this.cache = Caffeine.newBuilder()
                .maximumWeight(Math.max(0, maxBytes))
                .weigher((Key k, MemorySegment v) -> (int) Math.min(Integer.MAX_VALUE, v.byteSize()))
                .build();
    }

    /** The chunk for {@code key}, computed by {@code compute} on a miss. */
    public MemorySegment get(Key key, Function<Key, MemorySegment> compute) {
        return cache.get(key, compute);
    }
}
