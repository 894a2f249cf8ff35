package dev.modelfs.format.gguf;

import dev.modelfs.format.FormatException;

import java.util.List;
import java.util.Objects;

/**
 * A GGUF array value.
 *
 * <p>Invariants: {@code elementType} is not {@link GgufValueType#ARRAY} (ggml rejects nested arrays,
 * and so do we); {@code values} is immutable, null-free, and every element has the Java type of
 * {@code elementType} (see {@link GgufValueType}); strings for STRING arrays.
 */
public record GgufArray(GgufValueType elementType, List<Object> values) {

    public GgufArray {
        Objects.requireNonNull(elementType, "elementType");
        if (elementType == GgufValueType.ARRAY) {
            throw new FormatException("nested GGUF arrays are not supported");
        }
        values = List.copyOf(values);
        for (Object v : values) {
            elementType.checkValue(v, "GGUF array element");
        }
    }

    /** Number of elements. */
    public int size() {
        return values.size();
    }
}
