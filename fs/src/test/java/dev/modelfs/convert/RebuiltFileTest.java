package dev.modelfs.convert;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.store.Digest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A file rebuilt from its blob on read: one chunk of exactly the promised length, or a failed read. */
class RebuiltFileTest {
    static final BlobRef BLOB = new BlobRef(new Digest("f".repeat(64)), 3);

    /** Reverses the blob's bytes: an oracle computed here independently. */
    static byte[] reversed(MemorySegment blob) {
        byte[] b = blob.toArray(ValueLayout.JAVA_BYTE);
        byte[] r = new byte[b.length];
        for (int i = 0; i < b.length; i++) {
            r[i] = b[b.length - 1 - i];
        }
        return r;
    }

    @Test
    void oneChunkHoldingTheBuiltBytes() {
        RebuiltFile f = new RebuiltFile(BLOB, 3, RebuiltFileTest::reversed, "reversed");
        assertEquals(3, f.chunkBytes());
        assertEquals(3, f.chunkLength(0));
        assertEquals(List.of(BLOB), f.blobs());
        assertEquals("reversed", f.describe());
        MemorySegment out = Arena.ofAuto().allocate(3);
        f.compute(0, List.of(MemorySegment.ofArray(new byte[] {1, 2, 3})), out);
        assertArrayEquals(new byte[] {3, 2, 1}, out.toArray(ValueLayout.JAVA_BYTE));
        assertEquals(1, new RebuiltFile(BLOB, 0, b -> new byte[0], "empty").chunkBytes(), "an empty file has a nonzero chunk size");
    }

    @Test
    void aBlobThatNowBuildsAnotherLengthFailsTheRead() {
        RebuiltFile f = new RebuiltFile(BLOB, 3, RebuiltFileTest::reversed, "reversed");
        MemorySegment out = Arena.ofAuto().allocate(3);
        assertThrows(IllegalStateException.class, () -> f.compute(0, List.of(MemorySegment.ofArray(new byte[] {1, 2})), out));
    }
}
