package dev.modelfs.model;

import dev.modelfs.format.Shapes;
import dev.modelfs.quant.mlx.MlxQuant;

/**
 * A tensor as the model had it before quantization, and where its stored pieces live.
 *
 * <p>Invariants: {@code name} is the full logical name (with component prefix), {@code component}
 * the part before the first {@code /} ("" for the root) and {@code relativeName} the rest;
 * {@code quant} is null for unquantized tensors, in which case {@code scale}, {@code bias} and
 * {@code globalScale} are null and {@code logicalShape} equals the stored shape; for quantized tensors
 * {@code main} is U32 codes, {@code scale} is present, {@code bias} is present exactly for affine
 * modes, and {@code logicalShape} is the stored shape with the last axis times {@code 32/bits};
 * {@code globalScale} (nvfp4 only) is one F32, or one F32 per index of the first axis of a stacked
 * tensor ({@code [E, 1, 1]}), applying to that index's groups.
 */
public record LogicalTensor(String name, String component, String relativeName, StoredTensor main,
                            StoredTensor scale, StoredTensor bias, StoredTensor globalScale,
                            MlxQuant quant, long[] logicalShape) {
    public LogicalTensor {
        logicalShape = logicalShape.clone();
    }

    @Override
    public long[] logicalShape() {
        return logicalShape.clone();
    }

    public boolean quantized() {
        return quant != null;
    }

    public long logicalNumel() {
        return Shapes.product(logicalShape);
    }
}
