package dev.modelfs.bytes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Chunking of converted data: every chunk but the last is full, and ids key the chunk cache uniquely. */
class ConvertedDataTest {
    static ConvertedData of(long length, long chunk) {
        return new ConvertedData() {
            @Override public long length() { return length; }
            @Override public long chunkBytes() { return chunk; }
            @Override public List<BlobRef> blobs() { return List.of(); }
            @Override public void compute(long c, List<MemorySegment> blobs, MemorySegment out) { }
            @Override public String describe() { return "test"; }
        };
    }

    @Test
    void theLastChunkHoldsTheRemainder() {
        ConvertedData d = of(10, 4);
        assertEquals(4, d.chunkLength(0));
        assertEquals(4, d.chunkLength(1));
        assertEquals(2, d.chunkLength(2));
        assertEquals(4, of(8, 4).chunkLength(1), "an exact multiple ends on a full chunk");
    }

    @Test
    void idsAreUnique() {
        assertNotEquals(of(1, 1).id(), of(1, 1).id());
        assertEquals(1 << 20, ConvertedData.CHUNK_TARGET);
    }
}
