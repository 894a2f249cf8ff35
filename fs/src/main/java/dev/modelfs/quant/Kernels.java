package dev.modelfs.quant;

import java.util.Locale;

/**
 * Which implementation of the hot dequantization and cast loops this JVM runs.
 *
 * <p>{@link Impl#VECTOR}: the Vector API kernels, used when the module {@code jdk.incubator.vector} is in the
 * boot layer (the launcher adds {@code --add-modules jdk.incubator.vector} for the commands that convert), the
 * CPU's preferred vectors are at least 256 bits wide, and the system property {@value #PROPERTY} is not
 * {@code scalar}. Otherwise {@link Impl#SCALAR}: the plain loops, which every build keeps and tests against the
 * same vectors. Both produce identical bytes.
 *
 * <p>Invariants: decided once per JVM, on first use; classes that reference {@code jdk.incubator.vector} are
 * loaded only when {@link #active()} is {@link Impl#VECTOR}, so a JVM without the module never links them.
 */
public final class Kernels {
    /** System property that forces an implementation: {@code scalar} or {@code vector}. */
    public static final String PROPERTY = "modelfs.kernels";

    /** The two implementations of every kernel. */
    public enum Impl { SCALAR, VECTOR }

    private static final String MODULE = "jdk.incubator.vector";
    private static final int VECTOR_BITS = probeBits();
    private static final Impl ACTIVE = choose();

    private Kernels() {}

    /** The implementation the kernels of this JVM use. */
    public static Impl active() {
        return ACTIVE;
    }

    /** Whether the Vector API kernels can run here (module present, vectors of at least 256 bits). */
    public static boolean vectorAvailable() {
        return VECTOR_BITS >= 256;
    }

    /** Width of the preferred vectors in bits; 0 without the module. */
    public static int vectorBits() {
        return VECTOR_BITS;
    }

    private static int probeBits() {
        if (ModuleLayer.boot().findModule(MODULE).isEmpty()) return 0;
        try {
            return VectorProbe.preferredBits();
        } catch (LinkageError e) {
            return 0;
        }
    }

    /**
     * Whether {@code impl} asks for the vector loops: false for {@link Impl#SCALAR}; true for {@link Impl#VECTOR} when
     * this JVM can run them.
     *
     * @throws IllegalStateException for {@link Impl#VECTOR} when it cannot (module missing, vectors too narrow)
     */
    public static boolean isVector(Impl impl) {
        if (java.util.Objects.requireNonNull(impl, "impl") == Impl.SCALAR) return false;
        if (!vectorAvailable()) throw new IllegalStateException("vector kernels asked for, but " + describeMissing());
        return true;
    }

    /** One line for the log: which kernels run and why. */
    public static String describe() {
        if (ACTIVE == Impl.VECTOR) return "vector kernels (" + VECTOR_BITS + "-bit)";
        if (VECTOR_BITS == 0) return "scalar kernels (" + MODULE + " not loaded)";
        if (VECTOR_BITS < 256) return "scalar kernels (" + VECTOR_BITS + "-bit vectors only)";
        return "scalar kernels (-D" + PROPERTY + "=scalar)";
    }

    private static Impl choose() {
        String forced = System.getProperty(PROPERTY, "").toLowerCase(Locale.ROOT);
        if (forced.equals("scalar")) return Impl.SCALAR;
        if (!vectorAvailable()) {
            if (forced.equals("vector")) {
                throw new IllegalStateException("-D" + PROPERTY + "=vector but " + describeMissing());
            }
            return Impl.SCALAR;
        }
        return Impl.VECTOR;
    }

    private static String describeMissing() {
        return VECTOR_BITS == 0 ? MODULE + " is not loaded (add --add-modules " + MODULE + ")"
                : "the CPU's vectors are " + VECTOR_BITS + " bits";
    }
}
