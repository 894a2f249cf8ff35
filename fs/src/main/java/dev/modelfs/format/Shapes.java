package dev.modelfs.format;

/**
 * Products of tensor dimensions: the one place an element or row count is computed from a shape.
 *
 * <p>Invariant: every product is exact; one that does not fit a {@code long} throws
 * {@link ArithmeticException} (parsers turn that into a {@link FormatException}).
 */
public final class Shapes {
    private Shapes() {}

    /** The product of all of {@code dims} (1 for none). */
    public static long product(long[] dims) {
        return product(dims, 0);
    }

    /** The product of {@code dims[from..]} (1 for none), e.g. the rows of a GGUF tensor ({@code from} 1). */
    public static long product(long[] dims, int from) {
        long n = 1;
        for (int i = from; i < dims.length; i++) {
            n = Math.multiplyExact(n, dims[i]);
        }
        return n;
    }
}
