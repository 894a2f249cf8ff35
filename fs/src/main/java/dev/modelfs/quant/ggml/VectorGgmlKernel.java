package dev.modelfs.quant.ggml;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.quant.SegmentKernelCopies;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * A GGML kernel that runs one of the Vector API loops of {@link GgmlVectorLoops}, in a copy of that class whose JIT
 * profile has seen only this call's pair of segment classes ({@link SegmentKernelCopies}: one profile polluted by
 * heap, native and mapped segments made these loops up to 17x slower).
 *
 * <p>Invariants: writes the same bytes as the scalar kernel of its type; stateless and thread-safe; allocates nothing
 * once the copy for a segment pair exists. Only constructed when the Vector API kernels are chosen.
 */
final class VectorGgmlKernel extends GgmlKernel {
    /** {@link GgmlVectorLoops#run} copies, one per (source, destination) segment class pair. */
    static final SegmentKernelCopies LOOPS = new SegmentKernelCopies(MethodHandles.lookup(), GgmlVectorLoops.class,
            "run", MethodType.methodType(void.class, int.class, MemorySegment.class, long.class, MemorySegment.class,
                    long.class, long.class), 16);

    private final int kernel;

    /** @param kernel a kernel id of {@link GgmlVectorLoops} that dequantizes {@code type} */
    VectorGgmlKernel(GgmlType type, int kernel) {
        super(type);
        this.kernel = kernel;
    }

    @Override
    void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
        final MethodHandle loop = LOOPS.forSegments(src, dst);
        try {
            loop.invokeExact(kernel, src, s, dst, o, n);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return super.toString() + " (Vector API)";
    }
}
