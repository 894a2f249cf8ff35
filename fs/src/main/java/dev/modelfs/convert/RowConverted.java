package dev.modelfs.convert;

import dev.modelfs.arch.QkPermutation;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ConvertedData;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A tensor produced row by row from a {@link RowSource} (re-packed, cast or dequantized rows),
 * optionally with its rows permuted (the llama q/k permutation, docs/FORMATS.md §7.2): output row
 * {@code r} is source row {@code permutation.hfRowOf(r)}, or {@code r} without a permutation.
 *
 * <p>Invariants: output length {@code rows * source.outRowBytes()}; chunks hold whole rows
 * ({@code rowsPerChunk}, at least one), so a chunk reads only the source rows under it; without a
 * permutation consecutive rows are converted as one run.
 */
public final class RowConverted extends ConvertedData {
    private final RowSource source;
    private final long rows;
    private final QkPermutation permutation;
    private final long rowsPerChunk;
    private final String what;

    public RowConverted(RowSource source, long rows, QkPermutation permutation, String what) {
        if (permutation != null && permutation.rows() != rows) {
            throw new IllegalArgumentException(what + ": permutation of " + permutation.rows() + " rows for " + rows + " rows");
        }
        this.source = source;
        this.rows = rows;
        this.permutation = permutation;
        this.rowsPerChunk = Math.max(1, BlockConverted.CHUNK_TARGET / source.outRowBytes());
        this.what = what;
    }

    @Override
    public long length() {
        return Math.multiplyExact(rows, source.outRowBytes());
    }

    @Override
    public long chunkBytes() {
        return rowsPerChunk * source.outRowBytes();
    }

    @Override
    public List<BlobRef> blobs() {
        return source.blobs();
    }

    @Override
    public void compute(long chunk, List<MemorySegment> blobs, MemorySegment dst) {
        long first = chunk * rowsPerChunk;
        source.write(blobs, first, Math.min(rowsPerChunk, rows - first), permutation, dst);
    }

    @Override
    public String kernel() {
        return "rows: " + kernelOf(source);
    }

    private static String kernelOf(RowSource s) {
        return switch (s) {
            case RowSource.Plain p -> p.deq() + " -> " + p.out();
            case RowSource.MlxRows m -> "MLX " + m.parts().t.quant().mode() + " " + m.parts().t.quant().bits() + "-bit, "
                    + m.parts().scaleType + " scales -> " + m.out();
            case RowSource.Repack r -> "MLX repack " + r.kind() + ", " + r.parts().scaleType + " scales";
            case RowSource.Shifted sh -> kernelOf(sh.inner()) + ", shifted";
        };
    }

    @Override
    public String describe() {
        return what;
    }
}
