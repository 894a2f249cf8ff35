package dev.modelfs.convert;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ConvertedData;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.function.Function;

/**
 * A file computed from a blob when it is read, not kept in memory (a Hugging Face {@code tokenizer.json}
 * rebuilt from a GGUF header, or the {@code vocab.json} / {@code merges.txt} of a 150k-token vocabulary
 * rebuilt from a {@code tokenizer.json}, are several MiB): one chunk, the bytes of {@code build}
 * applied to the mapped blob.
 *
 * <p>Invariants: {@code build} is a deterministic function of the blob's bytes, and {@link #length()}
 * is the length it gave when the model directory was built; a blob that now gives another length
 * fails the read (an {@link IllegalStateException}, EIO) rather than serving other bytes.
 */
public final class RebuiltFile extends ConvertedData {
    private final BlobRef blob;
    private final long length;
    private final Function<MemorySegment, byte[]> build;
    private final String what;

    public RebuiltFile(BlobRef blob, long length, Function<MemorySegment, byte[]> build, String what) {
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
        byte[] bytes = build.apply(blobs.getFirst());
        if (bytes.length != length) {
            throw new IllegalStateException(what + ": rebuilt " + bytes.length + " bytes, expected " + length);
        }
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, out, 0, length);
    }

    /** The whole file is built in the heap for each read of it. */
    @Override
    public long builtBytes() {
        return length;
    }

    @Override
    public String describe() {
        return what;
    }
}
