package dev.modelfs.view;

import dev.modelfs.quant.BlockDequantizer;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * A GGML-block (or plain float) tensor converted to an {@link OutputType} with its rows reordered:
 * output row {@code r} is source row {@code sourceRow.applyAsLong(r)} (the inverse llama q/k
 * permutation of docs/FORMATS.md §7.2). Rows move whole, so quantized rows are dequantized intact.
 *
 * <p>Invariants: the source is {@code rows} rows of {@code rowBlocks} blocks at {@code srcOffset};
 * {@code sourceRow} is a permutation of {@code [0, rows)}; chunks are whole rows; output length
 * {@code rows * rowBlocks * blockElements * out.bytes}.
 */
public final class PermutedRows extends ConvertedData {
    private final BlobRef blob;
    private final long srcOffset;
    private final long rows;
    private final long rowBlocks;
    private final BlockDequantizer deq;
    private final OutputType out;
    private final LongUnaryOperator sourceRow;
    private final long rowsPerChunk;
    private final String what;

    public PermutedRows(BlobRef blob, long srcOffset, long rows, long rowBlocks, BlockDequantizer deq, OutputType out,
                        LongUnaryOperator sourceRow, String what) {
        this.blob = blob;
        this.srcOffset = srcOffset;
        this.rows = rows;
        this.rowBlocks = rowBlocks;
        this.deq = deq;
        this.out = out;
        this.sourceRow = sourceRow;
        this.what = what;
        long rowOut = Math.multiplyExact(rowBlocks * deq.blockElements(), (long) out.bytes);
        this.rowsPerChunk = Math.max(1, BlockConverted.CHUNK_TARGET / Math.max(1, rowOut));
        if (srcOffset < 0 || Math.addExact(srcOffset, Math.multiplyExact(Math.multiplyExact(rows, rowBlocks), (long) deq.blockBytes()))
                > blob.expectedSize()) {
            throw new IllegalArgumentException(what + ": tensor data outside its blob");
        }
    }

    @Override
    public long length() {
        return rows * rowBlocks * deq.blockElements() * out.bytes;
    }

    @Override
    public long chunkBytes() {
        return rowsPerChunk * rowBlocks * deq.blockElements() * out.bytes;
    }

    @Override
    public List<BlobRef> blobs() {
        return List.of(blob);
    }

    @Override
    public void compute(long chunk, List<MemorySegment> blobs, MemorySegment dst) {
        long first = chunk * rowsPerChunk;
        long n = Math.min(rowsPerChunk, rows - first);
        MemorySegment src = blobs.getFirst();
        long rowElems = rowBlocks * deq.blockElements();
        long rowSrcBytes = rowBlocks * deq.blockBytes();
        MemorySegment f32 = Scratch.f32(n * rowElems * 4);
        for (long i = 0; i < n; i++) {
            long s = sourceRow.applyAsLong(first + i);
            deq.dequantize(src, srcOffset + s * rowSrcBytes, f32, i * rowElems * 4, rowBlocks);
        }
        out.narrowInto(f32, n * rowElems, dst);
    }

    @Override
    public String describe() {
        return what + " rows reordered -> " + out.dtype;
    }
}
