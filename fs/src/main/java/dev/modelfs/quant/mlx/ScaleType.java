package dev.modelfs.quant.mlx;

/** Dtype of the {@code .scale}/{@code .bias} entries of a quantized tensor. */
public enum ScaleType {
    BF16(2), F16(2), F32(4),
    /** Raw 8-bit scale codes of the fp modes (E4M3 for nvfp4, E8M0 for mxfp4/mxfp8). */
    U8(1);

    private final int bytes;

    ScaleType(int bytes) { this.bytes = bytes; }

    /** Size of one scale element in bytes. */
    public int bytes() { return bytes; }
}
