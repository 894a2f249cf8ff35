/**
 * MLX quantization: affine int2-8, nvfp4, mxfp4, mxfp8 dequantization kernels (scalar and Vector API) and their
 * decode tables (docs/FORMATS.md §5).
 *
 * <p>May import: {@code format} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.quant.mlx;
