package dev.modelfs.view;

import dev.modelfs.cache.BlobLease;
import java.io.IOException;

/**
 * Maps blobs for readers. Implementations check the blob's size against {@link BlobRef#expectedSize()}
 * and fail with {@link java.nio.file.NoSuchFileException} (missing) or
 * {@link dev.modelfs.cache.BlobSizeMismatchException} (short, long, truncated).
 */
@FunctionalInterface
public interface BlobResolver {
    BlobLease acquire(BlobRef ref) throws IOException;
}
