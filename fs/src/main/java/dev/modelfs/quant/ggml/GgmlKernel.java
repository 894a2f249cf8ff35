package dev.modelfs.quant.ggml;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.quant.BlockDequantizer;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Base of the GGML kernels: argument checks up front (so a bad call throws before writing anything),
 * then {@link #run}, which each kernel implements with its own hot loop. Block sizes come from the
 * kernel's {@link GgmlType}, the one table of them.
 */
abstract class GgmlKernel implements BlockDequantizer {
    private final GgmlType type;
    private final int elems;
    private final int bytes;
    private final long maxBlocks;

    GgmlKernel(GgmlType type) {
        this.type = type;
        this.elems = type.blockElements();
        this.bytes = type.blockBytes();
        this.maxBlocks = Long.MAX_VALUE / Math.max(bytes, 4L * elems);
    }

    @Override
    public final int blockElements() {
        return elems;
    }

    @Override
    public final int blockBytes() {
        return bytes;
    }

    @Override
    public final void dequantize(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long blocks) {
        if (blocks < 0) {
            throw new IllegalArgumentException("blocks < 0: " + blocks);
        }
        if (blocks > maxBlocks) {
            throw new IndexOutOfBoundsException("too many blocks: " + blocks);
        }
        Objects.checkFromIndexSize(srcOffset, blocks * bytes, src.byteSize());
        Objects.checkFromIndexSize(dstOffset, blocks * elems * 4L, dst.byteSize());
        if (blocks != 0) {
            run(src, srcOffset, dst, dstOffset, blocks);
        }
    }

    /** Dequantizes {@code n > 0} blocks; bounds are already checked. */
    abstract void run(MemorySegment src, long s, MemorySegment dst, long o, long n);

    @Override
    public String toString() {
        return "GGML " + type + " dequantizer";
    }
}
