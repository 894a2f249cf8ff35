package dev.modelfs.bytes;

/**
 * One contiguous piece of a synthesized file. The closed family: literal bytes, zero padding,
 * a slice of a mapped blob, or converted (dequantized / cast) tensor data.
 *
 * <p>Invariant: {@link #length()} is fixed at construction and never depends on blob contents
 * beyond what was parsed to build the segment.
 */
public sealed interface Segment permits Segment.Literal, Segment.Zeros, Segment.BlobSlice, Segment.Converted {

    long length();

    /** Bytes held in memory (synthesized headers, small text files). */
    record Literal(byte[] bytes) implements Segment {
        @Override
        public long length() {
            return bytes.length;
        }
    }

    /** {@code length} zero bytes (alignment padding). */
    record Zeros(long length) implements Segment {
        public Zeros {
            if (length < 0) {
                throw new IllegalArgumentException("negative padding");
            }
        }
    }

    /** {@code length} bytes of {@code blob} starting at {@code offset}. */
    record BlobSlice(BlobRef blob, long offset, long length) implements Segment {
        public BlobSlice {
            if (offset < 0 || length < 0 || offset + length > blob.expectedSize()) {
                throw new IllegalArgumentException("slice outside blob " + blob.digest());
            }
        }
    }

    /** Converted tensor data, produced chunk by chunk through the chunk cache. */
    record Converted(ConvertedData data) implements Segment {
        @Override
        public long length() {
            return data.length();
        }
    }
}
