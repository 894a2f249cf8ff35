package dev.modelfs.bytes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.modelfs.store.Digest;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A file laid end to end from segments: sizes, segment lookup at every byte, the blobs it reads. */
class ByteSourceTest {
    static final BlobRef A = new BlobRef(new Digest("a".repeat(64)), 100);
    static final BlobRef B = new BlobRef(new Digest("b".repeat(64)), 50);

    @Test
    void emptySegmentsAreDroppedAndEveryByteFindsItsSegment() {
        Segment lit = new Segment.Literal(new byte[] {1, 2, 3});
        Segment pad = new Segment.Zeros(5);
        Segment slice = new Segment.BlobSlice(A, 10, 20);
        ByteSource s = new ByteSource(List.of(new Segment.Zeros(0), lit, new Segment.Literal(new byte[0]), pad, slice));
        assertEquals(3, s.segmentCount(), "the two empty segments are dropped");
        assertEquals(3 + 5 + 20, s.size());
        assertEquals(0, s.start(0));
        assertEquals(3, s.start(1));
        assertEquals(8, s.start(2));
        // oracle: walk the lengths by hand
        int[] expected = new int[28];
        for (int i = 0; i < 28; i++) {
            expected[i] = i < 3 ? 0 : i < 8 ? 1 : 2;
        }
        for (int i = 0; i < 28; i++) {
            assertEquals(expected[i], s.segmentAt(i), "byte " + i);
        }
        assertSame(slice, s.segment(2));
    }

    @Test
    void blobsAreListedOnceInFirstUseOrderWithEachSliceIndex() {
        ByteSource s = ByteSource.of(new Segment.BlobSlice(B, 0, 10), new Segment.Literal(new byte[] {9}),
                new Segment.BlobSlice(A, 0, 100), new Segment.BlobSlice(B, 10, 40));
        assertEquals(List.of(B, A), s.blobs());
        assertEquals(0, s.blobIndex(0));
        assertEquals(-1, s.blobIndex(1));
        assertEquals(1, s.blobIndex(2));
        assertEquals(0, s.blobIndex(3));
        assertEquals(10 + 1 + 100 + 40, s.size());
    }

    @Test
    void aLiteralIsItsBytes() {
        ByteSource s = ByteSource.literal(new byte[] {4, 5});
        assertEquals(2, s.size());
        assertEquals(List.of(), s.blobs());
        assertEquals(0, ByteSource.of().size());
    }
}
