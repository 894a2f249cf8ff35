package dev.modelfs.convert;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.quant.BlockDequantizer;
import dev.modelfs.quant.FloatFormat;
import dev.modelfs.quant.NarrowingDequant;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * A GGML-block (or plain float) tensor converted to an {@link OutputType} with its rows reordered:
 * output row {@code r} is source row {@code sourceRow.applyAsLong(r)} (the inverse llama q/k
 * permutation of docs/FORMATS.md §7.2). Rows move whole, so quantized rows are dequantized intact.
 *
 * <p>Invariants: the source is {@code rows} rows of {@code rowBlocks} blocks at {@code srcOffset};
 * {@code sourceRow} is a permutation of {@code [0, rows)}; chunks are whole rows (the units of
 * {@link UnitConverted}); output length {@code rows * rowBlocks * blockElements * out.bytes}.
 */
public final class PermutedRows extends UnitConverted {
    private final BlobRef blob;
    private final long srcOffset;
    private final long rowBlocks;
    private final BlockDequantizer deq;
    private final LongUnaryOperator sourceRow;
    private final String what;

    public PermutedRows(BlobRef blob, long srcOffset, long rows, long rowBlocks, BlockDequantizer deq, OutputType out,
                        LongUnaryOperator sourceRow, String what) {
        super(rows, Math.toIntExact(Math.multiplyExact(rowBlocks, (long) deq.blockElements())), out);
        this.blob = blob;
        this.srcOffset = srcOffset;
        this.rowBlocks = rowBlocks;
        this.deq = deq;
        this.sourceRow = sourceRow;
        this.what = what;
        requireInBlob(blob, srcOffset, Math.multiplyExact(Math.multiplyExact(rows, rowBlocks), (long) deq.blockBytes()), what);
    }

    @Override
    public List<BlobRef> blobs() {
        return List.of(blob);
    }

    @Override
    void convert(List<MemorySegment> blobs, long first, long count, FloatFormat format, MemorySegment dst) {
        MemorySegment src = blobs.getFirst();
        long rowSrcBytes = rowBlocks * deq.blockBytes();
        long rowElems = rowBlocks * deq.blockElements();
        NarrowingDequant.units((f, n, f32, off) -> {
            for (long i = 0; i < n; i++) {
                long s = sourceRow.applyAsLong(first + f + i);
                deq.dequantize(src, srcOffset + s * rowSrcBytes, f32, off + i * rowElems * 4, rowBlocks);
            }
        }, count, (int) rowElems, format, dst, 0);
    }

    @Override
    public String kernel() {
        return deq + " -> " + out();
    }

    @Override
    public String describe() {
        return what + " rows reordered -> " + out().dtype;
    }
}
