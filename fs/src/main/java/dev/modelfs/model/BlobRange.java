package dev.modelfs.model;

import dev.modelfs.store.Digest;

/**
 * Absolute bytes {@code [offset, offset+length)} of blob {@code blob}, whose manifest size is {@code blobSize}.
 *
 * <p>Invariant: the range lies inside the blob ({@code offset + length <= blobSize}).
 */
public record BlobRange(Digest blob, long blobSize, long offset, long length) {
    public BlobRange {
        if (offset < 0 || length < 0 || offset > blobSize - length) {
            throw new IllegalArgumentException("range outside blob " + blob.shortId());
        }
    }
}
