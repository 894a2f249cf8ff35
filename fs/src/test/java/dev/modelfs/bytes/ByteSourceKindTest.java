package dev.modelfs.bytes;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.modelfs.store.Digest;
import dev.modelfs.telemetry.FileKind;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The kind of a file, for the bytes-served figures: the rule of {@link FileKind}, one case per branch. */
class ByteSourceKindTest {
    private static final BlobRef BLOB = new BlobRef(Digest.parse("sha256:" + "cd".repeat(32)).orElseThrow(), 1000);

    /** Converted bytes that are never computed here (only their presence matters). */
    private static final ConvertedData CONVERTED = new ConvertedData() {
        @Override public long length() { return 64; }
        @Override public long chunkBytes() { return 64; }
        @Override public List<BlobRef> blobs() { return List.of(BLOB); }
        @Override public void compute(long chunk, List<MemorySegment> blobs, MemorySegment out) { }
        @Override public String describe() { return "test"; }
    };

    @Test
    void oneWholeBlobIsPassthrough() {
        assertEquals(FileKind.PASSTHROUGH, ByteSource.of(new Segment.BlobSlice(BLOB, 0, 1000)).kind());
    }

    @Test
    void partOfABlobOrABlobWithAHeaderIsReassembled() {
        assertEquals(FileKind.REASSEMBLED, ByteSource.of(new Segment.BlobSlice(BLOB, 8, 992)).kind());
        assertEquals(FileKind.REASSEMBLED, ByteSource.of(new Segment.Literal(new byte[8]),
                new Segment.BlobSlice(BLOB, 0, 1000)).kind());
        assertEquals(FileKind.REASSEMBLED, ByteSource.of(new Segment.BlobSlice(BLOB, 0, 500),
                new Segment.Zeros(12), new Segment.BlobSlice(BLOB, 500, 500)).kind());
    }

    @Test
    void anyConvertedSegmentMakesTheFileConverted() {
        assertEquals(FileKind.CONVERTED, ByteSource.of(new Segment.Literal(new byte[8]),
                new Segment.BlobSlice(BLOB, 0, 1000), new Segment.Converted(CONVERTED)).kind());
    }

    @Test
    void bytesModelfsWroteAreSynthesized() {
        assertEquals(FileKind.SYNTHESIZED, ByteSource.literal("{}".getBytes()).kind());
        assertEquals(FileKind.SYNTHESIZED, ByteSource.of(new Segment.Literal(new byte[3]), new Segment.Zeros(5)).kind());
        assertEquals(FileKind.SYNTHESIZED, ByteSource.of().kind());
    }
}
