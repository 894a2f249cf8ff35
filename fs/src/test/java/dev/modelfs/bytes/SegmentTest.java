package dev.modelfs.bytes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.modelfs.store.Digest;
import org.junit.jupiter.api.Test;

/** The segment kinds' lengths and the slices they refuse. */
class SegmentTest {
    static final BlobRef BLOB = new BlobRef(new Digest("c".repeat(64)), 64);

    @Test
    void lengthsAreWhatEachKindHolds() {
        assertEquals(3, new Segment.Literal(new byte[3]).length());
        assertEquals(7, new Segment.Zeros(7).length());
        assertEquals(64, new Segment.BlobSlice(BLOB, 0, 64).length());
        assertEquals(0, new Segment.BlobSlice(BLOB, 64, 0).length(), "an empty slice at the end is inside the blob");
    }

    @Test
    void slicesOutsideTheBlobAndNegativePaddingAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new Segment.BlobSlice(BLOB, 1, 64));
        assertThrows(IllegalArgumentException.class, () -> new Segment.BlobSlice(BLOB, -1, 2));
        assertThrows(IllegalArgumentException.class, () -> new Segment.BlobSlice(BLOB, 0, -1));
        assertThrows(IllegalArgumentException.class, () -> new Segment.Zeros(-1));
    }
}
