package dev.modelfs.quant.mlx;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Where one quantized tensor's bytes live. Offsets are absolute within their segments (they point at
 * group 0); {@code biases} is null unless the mode is affine; {@code globalScale} is 1f when absent.
 */
public record MlxTensorData(MemorySegment codes, long codesOffset, MemorySegment scales, long scalesOffset, ScaleType scaleType,
                            MemorySegment biases, long biasesOffset, float globalScale) {
    public MlxTensorData {
        Objects.requireNonNull(codes, "codes");
        Objects.requireNonNull(scales, "scales");
        Objects.requireNonNull(scaleType, "scaleType");
        if (codesOffset < 0 || scalesOffset < 0 || biasesOffset < 0) {
            throw new IllegalArgumentException("negative offset");
        }
    }
}
