package dev.modelfs.convert;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufReader;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.function.Function;

/**
 * A file computed from a GGUF blob's header when it is read, not kept in memory (a Hugging Face
 * {@code tokenizer.json} of a 150k-token vocabulary is several MiB): one chunk, the bytes of
 * {@code build} applied to the header parsed from the mapped blob.
 *
 * <p>Invariants: {@code build} is a deterministic function of the header, and {@link #length()} is the
 * length it gave when the model directory was built; a blob whose header now gives another length
 * fails the read (an {@link IllegalStateException}, EIO) rather than serving other bytes.
 */
public final class RebuiltFile extends ConvertedData {
    private final BlobRef blob;
    private final long length;
    private final Function<GgufFile, byte[]> build;
    private final String what;

    public RebuiltFile(BlobRef blob, long length, Function<GgufFile, byte[]> build, String what) {
        this.blob = blob;
        this.length = length;
        this.build = build;
        this.what = what;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public long chunkBytes() {
        return Math.max(1, length);
    }

    @Override
    public List<BlobRef> blobs() {
        return List.of(blob);
    }

    @Override
    public void compute(long chunk, List<MemorySegment> blobs, MemorySegment out) {
        byte[] bytes = build.apply(GgufReader.read(blobs.getFirst()));
        if (bytes.length != length) {
            throw new IllegalStateException(what + ": rebuilt " + bytes.length + " bytes, expected " + length);
        }
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, out, 0, length);
    }

    @Override
    public String describe() {
        return what;
    }
}
