package dev.modelfs.quant.mlx;

/** MLX quantization modes (docs/FORMATS.md §5.1). */
public enum MlxMode {
    /** {@code w = scale * q + bias}, unsigned integer codes of 2/3/4/5/6/8 bits. */
    AFFINE,
    /** FP4 E2M1 codes, FP8 E4M3 scale per 16 elements, optional global decode multiplier. */
    NVFP4,
    /** FP4 E2M1 codes, E8M0 scale per 32 elements. */
    MXFP4,
    /** FP8 E4M3 codes, E8M0 scale per 32 elements. */
    MXFP8
}
