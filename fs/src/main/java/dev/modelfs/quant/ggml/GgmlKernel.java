package dev.modelfs.quant.ggml;

import dev.modelfs.quant.BlockDequantizer;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Base of the GGML kernels: argument checks up front (so a bad call throws before writing anything),
 * then {@link #run}, which each kernel implements with its own hot loop.
 */
abstract class GgmlKernel implements BlockDequantizer {
    private final String name;
    private final int typeId;
    private final int elems;
    private final int bytes;
    private final long maxBlocks;

    GgmlKernel(String name, int typeId, int blockElements, int blockBytes) {
        this.name = name;
        this.typeId = typeId;
        this.elems = blockElements;
        this.bytes = blockBytes;
        this.maxBlocks = Long.MAX_VALUE / Math.max(blockBytes, 4L * blockElements);
    }

    @Override
    public final int blockElements() {
        return elems;
    }

    @Override
    public final int blockBytes() {
        return bytes;
    }

    /** GGML type id (docs/FORMATS.md §6.2). */
    final int typeId() {
        return typeId;
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
        return "GGML " + name + " dequantizer";
    }
}
