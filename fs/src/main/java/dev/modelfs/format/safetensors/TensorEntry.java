package dev.modelfs.format.safetensors;

import dev.modelfs.format.FormatException;

import dev.modelfs.format.Shapes;
import java.util.Arrays;
import java.util.Objects;

/**
 * One tensor of a safetensors header.
 *
 * <p>Invariants (checked by the constructor, {@link FormatException} otherwise): {@code name} and
 * {@code dtype} are non-null; every dimension of {@code shape} is {@code >= 0}; the element count and
 * its bit size fit in a {@code long}; the bit size is a multiple of 8; {@code 0 <= begin <= end} and
 * {@code end - begin == numel() * dtype.bits() / 8}. {@code begin}/{@code end} are relative to the
 * start of the data buffer ({@link SafetensorsHeader#dataStart()}), {@code end} exclusive.
 * {@code shape} is row-major (last axis fastest); {@code []} is a scalar with one element.
 * The record is immutable: the shape array is copied on the way in and out.
 */
public record TensorEntry(String name, Dtype dtype, long[] shape, long begin, long end) {

    public TensorEntry {
        Objects.requireNonNull(name, "name");
        if (dtype == null) {
            throw new FormatException("tensor " + Names.quote(name) + ": missing dtype");
        }
        if (shape == null) {
            throw new FormatException("tensor " + Names.quote(name) + ": missing shape");
        }
        shape = shape.clone();
        long expected = byteSizeOf(name, dtype, shape);
        if (begin < 0 || end < begin) {
            throw new FormatException("tensor " + Names.quote(name) + ": bad data_offsets [" + begin + ", " + end + "]");
        }
        if (end - begin != expected) {
            throw new FormatException("tensor " + Names.quote(name) + ": data_offsets [" + begin + ", " + end
                    + "] span " + (end - begin) + " bytes but " + dtype + Arrays.toString(shape) + " needs " + expected);
        }
    }

    /**
     * Byte size of a tensor of this dtype and shape.
     *
     * @throws FormatException for a negative dimension, an overflowing size, or a bit size that is
     *                         not a multiple of 8 (sub-byte dtypes)
     */
    static long byteSizeOf(String name, Dtype dtype, long[] shape) {
        for (long d : shape) {
            if (d < 0) {
                throw new FormatException("tensor " + Names.quote(name) + ": negative dimension " + d);
            }
        }
        try {
            long n = Shapes.product(shape);
            long bits = Math.multiplyExact(n, (long) dtype.bits());
            if (bits % 8 != 0) {
                throw new FormatException("tensor " + Names.quote(name) + ": " + n + " elements of " + dtype
                        + " are not a whole number of bytes");
            }
            return bits / 8;
        } catch (ArithmeticException e) {
            throw new FormatException("tensor " + Names.quote(name) + ": size of " + dtype + Arrays.toString(shape)
                    + " overflows");
        }
    }

    /** A copy of the shape. */
    @Override
    public long[] shape() {
        return shape.clone();
    }

    /** Number of dimensions. */
    public int rank() {
        return shape.length;
    }

    /** Product of the shape (1 for a scalar); exact, never overflows (constructor invariant). */
    public long numel() {
        return Shapes.product(shape);
    }

    /** {@code end - begin}, the tensor's size in bytes. */
    public long byteLength() {
        return end - begin;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TensorEntry t && name.equals(t.name) && dtype == t.dtype
                && Arrays.equals(shape, t.shape) && begin == t.begin && end == t.end;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, dtype, Arrays.hashCode(shape), begin, end);
    }

    @Override
    public String toString() {
        return "TensorEntry[" + name + ", " + dtype + Arrays.toString(shape) + ", " + begin + ".." + end + "]";
    }
}
