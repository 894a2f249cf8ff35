package dev.modelfs.quant;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Arrays;
import java.util.Objects;

/**
 * Copies of a kernel class, one per combination of segment classes, so that each copy keeps a clean JIT profile.
 *
 * <p>Why: C2 specialises every {@link MemorySegment} access on the segment classes seen at that bytecode. A loop
 * that has seen two classes at one access (heap and native segments, or plain native and file-mapped ones) is
 * compiled with polymorphic accesses and runs 4-15x slower (measured for the MLX kernels: 0.3-1.2 GiB/s instead of
 * about 5). This class defines a hidden-class copy of the kernel class (from its own class bytes) for each
 * combination of up to four segment classes seen, and returns the entry point of that copy. In practice there are
 * a handful of combinations; past {@code maxCopies} the original class serves the rest. Lookups scan a small
 * immutable array and allocate nothing.
 *
 * <p>The kernel class should be a top-level class without lambdas, string concatenation or nested classes.
 */
public final class SegmentKernelCopies {

    private record Copy(Class<?> a, Class<?> b, Class<?> c, Class<?> d, MethodHandle entry) {}

    private final MethodHandles.Lookup lookup;
    private final String name;
    private final MethodType type;
    private final int maxCopies;
    private final byte[] classBytes;
    private final MethodHandle shared;
    private volatile Copy[] copies = new Copy[0];

    /**
     * @param lookup      a full-privilege lookup in the kernel class's package ({@code MethodHandles.lookup()})
     * @param kernelClass the class to copy
     * @param name        name of its static entry method
     * @param type        type of that method
     * @param maxCopies   how many copies at most
     */
    public SegmentKernelCopies(MethodHandles.Lookup lookup, Class<?> kernelClass, String name, MethodType type,
                               int maxCopies) {
        this.lookup = Objects.requireNonNull(lookup, "lookup");
        this.name = Objects.requireNonNull(name, "name");
        this.type = Objects.requireNonNull(type, "type");
        this.maxCopies = maxCopies;
        try {
            this.shared = lookup.findStatic(kernelClass, name, type);
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("no static " + name + type + " in " + kernelClass, e);
        }
        byte[] bytes = null;
        try (InputStream in = kernelClass.getResourceAsStream(kernelClass.getSimpleName() + ".class")) {
            if (in != null) bytes = in.readAllBytes();
        } catch (IOException e) {
            bytes = null; // no copies: the shared class serves everything (correct, maybe slower)
        }
        this.classBytes = bytes;
    }

    /** The entry method of the original class. */
    public MethodHandle shared() {
        return shared;
    }

    /** Entry point for this combination of segments ({@code null}s allowed). */
    public MethodHandle forSegments(MemorySegment a, MemorySegment b) {
        return forClasses(classOf(a), classOf(b), null, null);
    }

    /** Entry point for this combination of segments ({@code null}s allowed). */
    public MethodHandle forSegments(MemorySegment a, MemorySegment b, MemorySegment c, MemorySegment d) {
        return forClasses(classOf(a), classOf(b), classOf(c), classOf(d));
    }

    private static Class<?> classOf(MemorySegment s) {
        return s == null ? null : s.getClass();
    }

    private MethodHandle forClasses(Class<?> a, Class<?> b, Class<?> c, Class<?> d) {
        for (Copy copy : copies) {
            if (copy.a == a && copy.b == b && copy.c == c && copy.d == d) return copy.entry;
        }
        return define(a, b, c, d);
    }

    private synchronized MethodHandle define(Class<?> a, Class<?> b, Class<?> c, Class<?> d) {
        Copy[] current = copies;
        for (Copy copy : current) {
            if (copy.a == a && copy.b == b && copy.c == c && copy.d == d) return copy.entry;
        }
        if (current.length >= maxCopies || classBytes == null) return shared;
        MethodHandle entry;
        try {
            MethodHandles.Lookup hidden = lookup.defineHiddenClass(classBytes, true);
            entry = hidden.findStatic(hidden.lookupClass(), name, type);
        } catch (ReflectiveOperationException | LinkageError | IllegalArgumentException e) {
            entry = shared;
        }
        Copy[] next = Arrays.copyOf(current, current.length + 1);
        next[current.length] = new Copy(a, b, c, d, entry);
        copies = next;
        return entry;
    }

    /** Number of combinations seen so far. */
    public int copies() {
        return copies.length;
    }
}
