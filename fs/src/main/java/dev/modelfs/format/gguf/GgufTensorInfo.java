package dev.modelfs.format.gguf;

import dev.modelfs.format.FormatException;

import dev.modelfs.format.Shapes;
import java.util.Arrays;
import java.util.Objects;

/**
 * One GGUF tensor info (docs/FORMATS.md §6.1).
 *
 * <p>Invariants (constructor, {@link FormatException} otherwise): {@code name} and {@code type}
 * non-null; {@code ne} has at most 4 dimensions ({@code GGML_MAX_DIMS}), stored order ({@code ne[0]}
 * fastest), each {@code >= 0}; {@code ne[0]} (1 if there are no dimensions) is a multiple of the
 * type's block size; element count and byte size fit in a long; {@code offset >= 0}, relative to the
 * data start of the file. The record is immutable: {@code ne} is copied on the way in and out.
 */
public record GgufTensorInfo(String name, long[] ne, GgmlType type, long offset) {

    /** {@code GGML_MAX_DIMS}. */
    public static final int MAX_DIMS = 4;

    public GgufTensorInfo {
        Objects.requireNonNull(name, "name");
        String what = "GGUF tensor " + GgufText.quote(name);
        if (type == null) {
            throw new FormatException(what + ": missing type");
        }
        if (ne == null) {
            throw new FormatException(what + ": missing dimensions");
        }
        ne = ne.clone();
        if (ne.length > MAX_DIMS) {
            throw new FormatException(what + ": " + ne.length + " dimensions, at most " + MAX_DIMS);
        }
        for (long d : ne) {
            if (d < 0) {
                throw new FormatException(what + ": negative dimension " + d);
            }
        }
        if (offset < 0) {
            throw new FormatException(what + ": negative offset " + offset);
        }
        try {
            Shapes.product(ne);
            Math.multiplyExact(type.rowBytes(ne.length == 0 ? 1 : ne[0]), Shapes.product(ne, 1));
        } catch (ArithmeticException e) {
            throw new FormatException(what + ": size of " + Arrays.toString(ne) + " overflows");
        } catch (FormatException e) {
            throw new FormatException(what + ": " + e.getMessage());
        }
    }

    /** A copy of the dimensions as stored ({@code ne[0]} fastest). */
    @Override
    public long[] ne() {
        return ne.clone();
    }

    /** Number of dimensions ({@code n_dims}). */
    public int rank() {
        return ne.length;
    }

    /** Product of the dimensions (1 for none); exact. */
    public long elements() {
        return Shapes.product(ne);
    }

    /** Bytes of tensor data: {@code rowBytes(ne[0]) * ne[1] * ne[2] * ne[3]}; exact. */
    public long byteSize() {
        long bytes = type.rowBytes(ne.length == 0 ? 1 : ne[0]);
        for (int i = 1; i < ne.length; i++) {
            bytes *= ne[i];
        }
        return bytes;
    }

    /** The row-major (safetensors/PyTorch) shape: {@code ne} reversed. */
    public long[] shape() {
        long[] s = new long[ne.length];
        for (int i = 0; i < ne.length; i++) {
            s[i] = ne[ne.length - 1 - i];
        }
        return s;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GgufTensorInfo t && name.equals(t.name) && Arrays.equals(ne, t.ne) && type == t.type
                && offset == t.offset;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, Arrays.hashCode(ne), type, offset);
    }

    @Override
    public String toString() {
        return "GgufTensorInfo[" + name + ", ne=" + Arrays.toString(ne) + ", " + type + ", offset=" + offset + "]";
    }
}
