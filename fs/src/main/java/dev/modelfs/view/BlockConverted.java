package dev.modelfs.view;

import dev.modelfs.quant.BlockDequantizer;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A GGML-block (or plain float) tensor converted to an {@link OutputType}: chunk {@code c} covers
 * whole blocks only, so it reads exactly the source blocks under it.
 *
 * <p>Invariants: {@code blocks * blockBytes} source bytes at {@code src}; output length
 * {@code blocks * blockElements * out.bytes}; chunks are {@code blocksPerChunk} blocks.
 */
public final class BlockConverted extends ConvertedData {
    /** Target output bytes per chunk. */
    static final long CHUNK_TARGET = 1 << 20;

    private final BlobRef blob;
    private final long srcOffset;
    private final long blocks;
    private final BlockDequantizer deq;
    private final OutputType out;
    private final long blocksPerChunk;
    private final String what;

    public BlockConverted(BlobRef blob, long srcOffset, long blocks, BlockDequantizer deq, OutputType out, String what) {
        this.blob = blob;
        this.srcOffset = srcOffset;
        this.blocks = blocks;
        this.deq = deq;
        this.out = out;
        this.blocksPerChunk = Math.max(1, CHUNK_TARGET / ((long) deq.blockElements() * out.bytes));
        this.what = what;
        if (srcOffset < 0 || Math.addExact(srcOffset, Math.multiplyExact(blocks, (long) deq.blockBytes())) > blob.expectedSize()) {
            throw new IllegalArgumentException(what + ": tensor data outside its blob");
        }
    }

    @Override
    public long length() {
        return blocks * deq.blockElements() * out.bytes;
    }

    @Override
    public long chunkBytes() {
        return blocksPerChunk * deq.blockElements() * out.bytes;
    }

    @Override
    public List<BlobRef> blobs() {
        return List.of(blob);
    }

    @Override
    public void compute(long chunk, List<MemorySegment> blobs, MemorySegment dst) {
        long first = chunk * blocksPerChunk;
        long n = Math.min(blocksPerChunk, blocks - first);
        MemorySegment src = blobs.getFirst();
        long from = srcOffset + first * deq.blockBytes();
        long elems = n * deq.blockElements();
        MemorySegment f32 = Scratch.f32(elems * 4);
        deq.dequantize(src, from, f32, 0, n);
        out.narrowInto(f32, elems, dst);
    }

    @Override
    public String describe() {
        return what + " -> " + out.dtype;
    }
}
