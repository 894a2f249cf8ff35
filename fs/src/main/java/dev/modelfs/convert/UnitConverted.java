package dev.modelfs.convert;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.quant.BlockDequantizer;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * A converted tensor: {@code units} units of a {@link UnitSource} (dequantized, cast, shifted or re-packed),
 * in source order or reordered ({@code order}: the llama q/k row permutation, docs/FORMATS.md §7.2). The
 * one kind of converted tensor data, for every view and both directions.
 *
 * <p>Invariants: output length {@code units * source.outUnitBytes()}; a chunk is {@code unitsPerChunk}
 * whole units (about {@value ConvertedData#CHUNK_TARGET} output bytes, at least one unit), so it reads
 * exactly the source units under it; the source units lie inside their blobs (checked at construction).
 */
public final class UnitConverted extends ConvertedData {
    private final UnitSource source;
    private final long units;
    private final LongUnaryOperator order;
    private final long unitsPerChunk;
    private final String what;

    /**
     * @param order output unit {@code u} is source unit {@code order.applyAsLong(u)} (a permutation of
     *              {@code [0, units)}); null: in order
     */
    public UnitConverted(UnitSource source, long units, LongUnaryOperator order, String what) {
        source.requireUnits(units, what);
        this.source = source;
        this.units = units;
        this.order = order;
        this.unitsPerChunk = Math.max(1, CHUNK_TARGET / source.outUnitBytes());
        this.what = what;
        Math.multiplyExact(units, source.outUnitBytes());       // the length fits
    }

    /** {@code blocks} GGML blocks (or plain floats) of {@code deq} at {@code blob@offset}, converted to {@code out}. */
    public static UnitConverted blocks(BlobRef blob, long offset, long blocks, BlockDequantizer deq, OutputType out, String what) {
        return new UnitConverted(UnitSource.Blocks.converted(blob, offset, 1, deq, out), blocks, null, what + " -> " + out.dtype);
    }

    /** An MLX-quantized tensor dequantized to {@code out}, group by group. */
    public static UnitConverted mlx(LogicalTensor t, OutputType out) {
        int g = t.quant().groupSize();
        return new UnitConverted(UnitSource.MlxGroups.of(t, g, out), t.logicalNumel() / g, null,
                t.name() + " " + t.quant().canonicalName() + " g" + g + " -> " + out.dtype);
    }

    @Override
    public long length() {
        return units * source.outUnitBytes();
    }

    @Override
    public long chunkBytes() {
        return unitsPerChunk * source.outUnitBytes();
    }

    @Override
    public List<BlobRef> blobs() {
        return source.blobs();
    }

    @Override
    public void compute(long chunk, List<MemorySegment> blobs, MemorySegment dst) {
        long first = chunk * unitsPerChunk;
        source.write(blobs, first, Math.min(unitsPerChunk, units - first), order, dst);
    }

    @Override
    public String describe() {
        return what;
    }
}
