package dev.modelfs.synth;

import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.model.BlobRange;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.store.Digest;
import java.util.Arrays;

/** Logical tensors for planner tests: no bytes behind them, only names, shapes and a blob range that fits. */
final class PlanTensors {
    private PlanTensors() {}

    /** A BF16 tensor {@code name} of {@code shape}, stored at the start of {@code blob} (a blob of 1 TiB). */
    static LogicalTensor bf16(Digest blob, String name, long... shape) {
        long n = Arrays.stream(shape).reduce(1, (a, b) -> a * b);
        StoredTensor s = new StoredTensor(name, Dtype.BF16, shape, new BlobRange(blob, 1L << 40, 0, n * 2));
        return new LogicalTensor(name, "", name, s, null, null, null, null, shape);
    }
}
