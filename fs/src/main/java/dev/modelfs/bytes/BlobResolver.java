package dev.modelfs.bytes;

import dev.modelfs.cache.BlobLease;
import dev.modelfs.cache.BlobMappings;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;

/**
 * Maps blobs for readers. Implementations check the blob's size against {@link BlobRef#expectedSize()}
 * and fail with {@link java.nio.file.NoSuchFileException} (missing, or no regular file),
 * {@link dev.modelfs.cache.BlobSizeMismatchException} (short, long, truncated) or
 * {@link dev.modelfs.cache.UntrustedFileException} (a linked file the store's owner does not own).
 */
@FunctionalInterface
public interface BlobResolver {
    BlobLease acquire(BlobRef ref) throws IOException;

    /**
     * The one resolver every protocol adapter (FUSE, NFS) serves a store's blobs through: blobs are
     * opened by {@link OllamaStore#openBlob} (the trusted open) and shared through {@code mappings},
     * keyed by digest.
     */
    static BlobResolver forStore(OllamaStore store, BlobMappings mappings) {
        return ref -> mappings.acquire(ref.digest().hex(), () -> store.openBlob(ref.digest()), ref.expectedSize());
    }
}
