package dev.modelfs.model;

import dev.modelfs.format.Shapes;
import dev.modelfs.format.safetensors.Dtype;

/**
 * One safetensors entry exactly as a tensor blob stores it.
 *
 * <p>Invariant: {@code bytes.length()} equals numel(shape) * bits(dtype) / 8 (validated by the parser).
 */
public record StoredTensor(String key, Dtype dtype, long[] shape, BlobRange bytes) {
    public StoredTensor {
        shape = shape.clone();
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    public long numel() {
        return Shapes.product(shape);
    }
}
