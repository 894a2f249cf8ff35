package dev.modelfs.quant;

import java.lang.foreign.MemorySegment;

/**
 * Turns whole blocks of a block-quantized (or plain) element format into little-endian f32.
 *
 * <p>Invariants: {@link #blockElements()} and {@link #blockBytes()} are constant for an instance;
 * {@link #dequantize} reads exactly {@code blocks * blockBytes()} bytes from {@code src} starting at
 * {@code srcOffset} and writes exactly {@code blocks * blockElements() * 4} bytes to {@code dst}
 * starting at {@code dstOffset}; it allocates nothing and keeps no state between calls, so one
 * instance is safe to share between threads. Offsets need no alignment.
 */
public interface BlockDequantizer {

    /** Elements produced by one block. */
    int blockElements();

    /** Bytes consumed by one block. */
    int blockBytes();

    /**
     * Dequantizes {@code blocks} consecutive blocks.
     *
     * @param src       source bytes (mmapped blob or heap segment)
     * @param srcOffset byte offset of the first block in {@code src}
     * @param dst       destination, receives {@code blocks * blockElements()} LE f32 values
     * @param dstOffset byte offset in {@code dst}
     * @param blocks    number of blocks, {@code >= 0}
     */
    void dequantize(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long blocks);
}
