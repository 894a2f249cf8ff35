package dev.modelfs.convert;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.quant.FloatFormat;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A tensor dequantized unit by unit (GGML blocks, MLX groups) to an {@link OutputType}: the tail that
 * {@link BlockConverted}, {@link MlxConverted} and {@link PermutedRows} (unit = one row) share. Chunk {@code c} covers whole units only, so it
 * reads exactly the source units under it and converts them with one quant-level call.
 *
 * <p>Invariants: {@code units * unitElements} output values of {@code out.bytes} each; chunks are
 * {@code unitsPerChunk} units (about {@value #CHUNK_TARGET} output bytes, at least one unit).
 */
public abstract sealed class UnitConverted extends ConvertedData permits BlockConverted, MlxConverted, PermutedRows {
    /** Target output bytes per chunk. */
    public static final long CHUNK_TARGET = 1 << 20;

    private final long units;
    private final int unitElements;
    private final OutputType out;
    private final long unitsPerChunk;

    UnitConverted(long units, int unitElements, OutputType out) {
        this.units = units;
        this.unitElements = unitElements;
        this.out = out;
        this.unitsPerChunk = Math.max(1, CHUNK_TARGET / ((long) unitElements * out.bytes));
    }

    /** Requires {@code bytes} source bytes at {@code offset} to lie inside {@code blob}. */
    static void requireInBlob(BlobRef blob, long offset, long bytes, String what) {
        if (offset < 0 || Math.addExact(offset, bytes) > blob.expectedSize()) {
            throw new IllegalArgumentException(what + ": tensor data outside its blob");
        }
    }

    /** The output type. */
    public final OutputType out() {
        return out;
    }

    @Override
    public final long length() {
        return units * unitElements * out.bytes;
    }

    @Override
    public final long chunkBytes() {
        return unitsPerChunk * unitElements * out.bytes;
    }

    @Override
    public final void compute(long chunk, List<MemorySegment> blobs, MemorySegment dst) {
        long first = chunk * unitsPerChunk;
        convert(blobs, first, Math.min(unitsPerChunk, units - first), out.format, dst);
    }

    /**
     * Writes units {@code [first, first+count)} in {@code format} to the start of {@code dst}.
     *
     * @param blobs the mapped bytes of each of {@link #blobs()}, in the same order
     */
    abstract void convert(List<MemorySegment> blobs, long first, long count, FloatFormat format, MemorySegment dst);
}
