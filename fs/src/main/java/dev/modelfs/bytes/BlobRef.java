package dev.modelfs.bytes;

import dev.modelfs.store.Digest;

/**
 * A blob a file's bytes come from, with the size its manifest promises.
 *
 * <p>Invariant: {@code expectedSize >= 0}; the blob is resolved and mapped only when a file built
 * from it is opened, so a missing blob costs nothing until someone reads.
 */
public record BlobRef(Digest digest, long expectedSize) {}
