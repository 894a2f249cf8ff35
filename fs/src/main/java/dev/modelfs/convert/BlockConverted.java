package dev.modelfs.convert;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.quant.BlockDequantizer;
import dev.modelfs.quant.FloatFormat;
import dev.modelfs.quant.NarrowingDequant;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A GGML-block (or plain float) tensor converted to an {@link OutputType}, chunked on whole blocks.
 *
 * <p>Invariants: {@code blocks * blockBytes} source bytes at {@code src}; output length
 * {@code blocks * blockElements * out.bytes}.
 */
public final class BlockConverted extends UnitConverted {
    private final BlobRef blob;
    private final long srcOffset;
    private final BlockDequantizer deq;
    private final String what;

    public BlockConverted(BlobRef blob, long srcOffset, long blocks, BlockDequantizer deq, OutputType out, String what) {
        super(blocks, deq.blockElements(), out);
        this.blob = blob;
        this.srcOffset = srcOffset;
        this.deq = deq;
        this.what = what;
        requireInBlob(blob, srcOffset, Math.multiplyExact(blocks, (long) deq.blockBytes()), what);
    }

    @Override
    public List<BlobRef> blobs() {
        return List.of(blob);
    }

    @Override
    void convert(List<MemorySegment> blobs, long first, long count, FloatFormat format, MemorySegment dst) {
        NarrowingDequant.blocks(deq, blobs.getFirst(), srcOffset + first * deq.blockBytes(), count, format, dst, 0);
    }

    @Override
    protected String identity() {
        return "blocks " + blob.digest().hex() + " " + blob.expectedSize() + " @" + srcOffset + " " + kernelType() + " -> " + out();
    }

    /** The kernel's type ("GGML Q8_0 dequantizer"): both implementations write the same bytes, so neither is named. */
    private String kernelType() {
        return deq.toString().replace(" (Vector API)", "");
    }

    @Override
    public String kernel() {
        return deq + " -> " + out();
    }

    @Override
    public String describe() {
        return what + " -> " + out().dtype;
    }
}
