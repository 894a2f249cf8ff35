package dev.modelfs.nfs;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import dev.modelfs.tree.FileNode;
import dev.modelfs.read.OpenedSource;
import dev.modelfs.serve.ServePolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The opened sources of recently read files (NFS has no open/close): a bounded cache, so a stream of
 * READs maps a file's blobs once. Files are opened by the {@link ServePolicy}, so a sequential NFS
 * reader of converted bytes gets the same read-ahead as a FUSE reader.
 *
 * <p>Invariants: at most {@code maxOpen} sources are cached; an evicted source is closed only once
 * no READ still uses it (reference counted), so a read never sees its blobs unmapped underneath.
 * Sources are opened by the {@link ServePolicy}, with the served tree's read-ahead: a client reading a
 * converted file sequentially (READs within the read-ahead slack of each other, in any order) gets the
 * chunks ahead converted on every core, as a FUSE reader does.
 */
final class OpenFiles implements AutoCloseable {
    private final ServePolicy policy;
    private final Cache<FileNode, Opened> cache;

    /** A cached source and its users: the cache holds one reference, every READ in flight one more. */
    static final class Opened implements AutoCloseable {
        private final OpenedSource source;
        private final AtomicInteger refs = new AtomicInteger(1);

        Opened(OpenedSource source) {
            this.source = source;
        }

        OpenedSource source() {
            return source;
        }

        boolean retain() {
            while (true) {
                int r = refs.get();
                if (r == 0) {
                    return false;
                }
                if (refs.compareAndSet(r, r + 1)) {
                    return true;
                }
            }
        }

        @Override
        public void close() {
            if (refs.decrementAndGet() == 0) {
                source.close();
            }
        }
    }

    OpenFiles(ServePolicy policy, int maxOpen) {
        this.policy = policy;
        this.cache = Caffeine.newBuilder().maximumSize(maxOpen).expireAfterAccess(Duration.ofMinutes(2))
                .executor(Runnable::run)
                .<FileNode, Opened>removalListener((k, v, cause) -> {
                    if (v != null && cause != RemovalCause.REPLACED) {
                        v.close();
                    }
                }).build();
    }

    /**
     * The opened source of {@code node}, retained: close the result when the read is done. The source is opened
     * outside the cache's own map (opening leases blobs, which may wait on the store's disk: a compute in the map
     * would hold other files' entries while it waits; docs/DESIGN.md §2.8); two READs that open one file at once
     * keep one source and close the other.
     */
    Opened open(FileNode node) throws IOException {
        while (true) {
            Opened o = cache.getIfPresent(node);
            if (o == null) {
                Opened fresh = new Opened(policy.open(node));
                o = cache.asMap().putIfAbsent(node, fresh);
                if (o == null) {
                    o = fresh;
                } else {
                    fresh.close();
                }
            }
            if (o.retain()) {
                return o;
            }
            cache.asMap().remove(node, o);     // evicted and closed meanwhile: open afresh
        }
    }

    /**
     * Forgets {@code o}, the source of {@code node}, after a READ of it failed: the next READ opens the file afresh
     * (maps its blobs again), so a file whose blobs read again is served again (SEMANTICS.md "When the store's disk
     * fails"); READs still using {@code o} finish with it.
     */
    void failed(FileNode node, Opened o) {
        cache.asMap().remove(node, o);
    }

    /** Files open now (sources cached for READs). */
    int size() {
        return (int) cache.estimatedSize();
    }

    @Override
    public void close() {
        cache.invalidateAll();
        cache.cleanUp();
    }
}
