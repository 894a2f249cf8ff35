package dev.modelfs.quant.mlx;

import dev.modelfs.quant.FloatFormat;
import dev.modelfs.quant.Kernels;
import dev.modelfs.quant.NarrowingDequant;
import dev.modelfs.quant.SegmentKernelCopies;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Objects;

/**
 * Dequantizes MLX-quantized tensors (docs/FORMATS.md §5) to little-endian f32.
 *
 * <p>Group {@code g} of the flattened tensor holds elements {@code g*G .. g*G+G-1}; its codes start at
 * {@code codesOffset + g*codeBytesPerGroup()} (packed as a little-endian bit stream, §5.2), its scale
 * (and bias) is element {@code g} of the scale (bias) array.
 *
 * <ul>
 *   <li>affine: {@code f32(scale) * q} rounded to f32, then {@code + f32(bias)} rounded to f32;</li>
 *   <li>nvfp4: {@code E2M1(q) * E4M3(scale)}, then {@code * globalScale} if it is not 1;</li>
 *   <li>mxfp4: {@code E2M1(q) * E8M0(scale)}; mxfp8: {@code E4M3(q) * E8M0(scale)} (a global scale other than 1
 *       is applied the same way as for nvfp4).</li>
 * </ul>
 *
 * <p>Each instance runs one {@link Kernels.Impl}: {@link #of(MlxQuant)} takes {@link Kernels#active()}, {@link
 * #of(MlxQuant, Kernels.Impl)} the one given; both write identical bytes. The vector implementation covers affine 4
 * and 8 bits, nvfp4, mxfp4 and mxfp8 ({@code MlxVectorKernels}); affine 2, 3, 5 and 6 bits run the scalar loops
 * under either.
 *
 * <p>Instances are immutable and thread-safe; {@link #dequantize} allocates nothing. Native (including mapped)
 * and heap segments are all accepted; under the vector implementation, int4 to bf16 into a native destination runs a
 * fused kernel (one pass, no f32 scratch; {@link #twoPass} gives an instance without it, same bytes); each
 * combination of segment classes runs its own copy of the kernels (of either implementation) so that mixing them
 * does not slow the others down. Single-thread speed on the development machine ({@code MlxDequantBench}, 128 KiB
 * of f32 output): scalar about 9-13 GB/s; vector about 50-70 GB/s for int4 and int8, 30-50 for nvfp4 and mxfp4,
 * 15-20 for mxfp8.
 */
public final class MlxDequantizer {

    /** {@link MlxKernels#run} copies, one per combination of segment classes (see {@link SegmentKernelCopies}). */
    static final SegmentKernelCopies KERNELS = new SegmentKernelCopies(MethodHandles.lookup(), MlxKernels.class, "run",
            MethodType.methodType(void.class, int.class, MemorySegment.class, long.class, MemorySegment.class, long.class,
                    MemorySegment.class, long.class, int.class, long.class, int.class, int.class, float.class,
                    MemorySegment.class, long.class),
            16);

    private static final int K_AFFINE_GENERIC = MlxKernels.K_AFFINE_GENERIC, K_AFFINE4 = MlxKernels.K_AFFINE4,
            K_AFFINE8 = MlxKernels.K_AFFINE8, K_NVFP4 = MlxKernels.K_NVFP4, K_MXFP4 = MlxKernels.K_MXFP4,
            K_MXFP8 = MlxKernels.K_MXFP8;
    private static final int BF16 = MlxKernels.BF16, F16 = MlxKernels.F16, F32_TYPE = MlxKernels.F32_TYPE;

    /** The vector kernels; initialised (and {@code jdk.incubator.vector} linked) on first use only. */
    private static final class VectorKernels {
        static final SegmentKernelCopies KERNELS = new SegmentKernelCopies(MethodHandles.lookup(),
                MlxVectorKernels.class, "run", MlxDequantizer.KERNELS.shared().type(), 16);
        /**
         * {@link MlxVectorKernels#affine4Bf16} copies: int4 straight to bf16, one pass (the common converted read).
         * Vector only: a scalar twin (each value rounded by {@code FloatCasts.f32ToBf16}, two per int store) measured
         * 14 % slower than the scalar two passes, whose cast loop C2 vectorizes (BENCHMARKS.md).
         */
        static final SegmentKernelCopies AFFINE4_BF16 = new SegmentKernelCopies(MethodHandles.lookup(),
                MlxVectorKernels.class, "affine4Bf16", MethodType.methodType(void.class, MemorySegment.class, long.class,
                        MemorySegment.class, long.class, MemorySegment.class, long.class, int.class, long.class, int.class,
                        MemorySegment.class, long.class),
                16);
    }

    private final MlxQuant quant;
    private final Kernels.Impl impl;
    /** {@link #KERNELS} or the vector ones. */
    private final SegmentKernelCopies kernels;
    private final int kind;
    /** The fused int4 to bf16 vector kernels; null unless int4 under {@link Kernels.Impl#VECTOR}, not {@link #twoPass}. */
    private final SegmentKernelCopies bf16Kernels;
    private final int groupSize;
    private final int codeBytes;

    private MlxDequantizer(MlxQuant q, Kernels.Impl impl, boolean fuse) {
        this.quant = q;
        this.impl = impl;
        this.groupSize = q.groupSize();
        this.codeBytes = q.codeBytesPerGroup();
        this.kind = switch (q.mode()) {
            case AFFINE -> q.bits() == 4 ? K_AFFINE4 : q.bits() == 8 ? K_AFFINE8 : K_AFFINE_GENERIC;
            case NVFP4 -> K_NVFP4;
            case MXFP4 -> K_MXFP4;
            case MXFP8 -> K_MXFP8;
        };
        this.kernels = impl == Kernels.Impl.VECTOR && MlxVectorKernels.supports(kind) ? VectorKernels.KERNELS : KERNELS;
        this.bf16Kernels = fuse && kind == K_AFFINE4 && impl == Kernels.Impl.VECTOR ? VectorKernels.AFFINE4_BF16 : null;
    }

    /** A dequantizer for {@code q} running {@link Kernels#active()}. */
    public static MlxDequantizer of(MlxQuant q) {
        return of(q, Kernels.active());
    }

    /**
     * A dequantizer for {@code q} running {@code impl} (tests, benchmarks).
     *
     * @throws IllegalStateException if {@code impl} is {@link Kernels.Impl#VECTOR} and this JVM cannot run vectors
     */
    public static MlxDequantizer of(MlxQuant q, Kernels.Impl impl) {
        Objects.requireNonNull(q, "q");
        Kernels.isVector(impl);         // throws when VECTOR cannot run here
        return new MlxDequantizer(q, impl, true);
    }

    /**
     * As {@link #of(MlxQuant, Kernels.Impl)}, but its bf16 output of int4 data always takes the two passes
     * (dequantize to an f32 scratch, then narrow), as the scalar implementation always does, instead of the fused
     * vector kernel: the reference that kernel is tested and benchmarked against. Same bytes.
     */
    public static MlxDequantizer twoPass(MlxQuant q, Kernels.Impl impl) {
        Objects.requireNonNull(q, "q");
        Kernels.isVector(impl);
        return new MlxDequantizer(q, impl, false);
    }

    /** The implementation this instance runs. */
    public Kernels.Impl impl() {
        return impl;
    }

    /** The parameters this instance decodes. */
    public MlxQuant quant() {
        return quant;
    }

    /**
     * Dequantizes groups {@code [firstGroup, firstGroup+groups)} into {@code groups * groupSize} LE f32 values
     * at {@code dst@dstOffset}. Offsets need no alignment.
     *
     * @throws IllegalArgumentException if the scale type does not fit the mode, biases are missing for affine
     *         data, or a global scale other than 1 is given for affine data
     * @throws IndexOutOfBoundsException if a range lies outside its segment
     */
    public void dequantize(MlxTensorData t, long firstGroup, long groups, MemorySegment dst, long dstOffset) {
        int type = checked(t, firstGroup, groups, dst, dstOffset, 4);
        if (groups == 0) return;
        ScaleType st = t.scaleType();
        boolean affine = kind <= K_AFFINE8;
        long c = t.codesOffset() + firstGroup * codeBytes;
        long s = t.scalesOffset() + firstGroup * st.bytes();
        MemorySegment codes = t.codes(), scales = t.scales(), biases = affine ? t.biases() : null;
        long b = affine ? t.biasesOffset() + firstGroup * st.bytes() : 0;
        // a copy of the kernels whose JIT profile has seen only these segment classes
        MethodHandle run = kernels.forSegments(codes, scales, biases, dst);
        try {
            run.invokeExact(kind, codes, c, scales, s, biases, b, type, groups, groupSize, quant.bits(),
                    t.globalScale(), dst, dstOffset);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Validates a call writing {@code groups} groups of {@code bytesPerValue}-byte values at {@code dst@dstOffset};
     * returns the kernels' scale type code.
     */
    private int checked(MlxTensorData t, long firstGroup, long groups, MemorySegment dst, long dstOffset,
                        int bytesPerValue) {
        Objects.requireNonNull(t, "t");
        Objects.requireNonNull(dst, "dst");
        if (firstGroup < 0 || groups < 0) {
            throw new IllegalArgumentException("negative group range " + firstGroup + "+" + groups);
        }
        if (dstOffset < 0) throw new IndexOutOfBoundsException("negative dstOffset " + dstOffset);
        if (dst.isReadOnly()) throw new IllegalArgumentException("dst is read-only");
        ScaleType st = t.scaleType();
        boolean affine = kind <= K_AFFINE8;
        if (affine) {
            if (st == ScaleType.U8) throw new IllegalArgumentException("affine scales must be BF16, F16 or F32, not U8");
            if (t.biases() == null) throw new IllegalArgumentException("affine data needs biases");
            if (t.globalScale() != 1f) throw new IllegalArgumentException("global scale given for affine data");
        } else if (st != ScaleType.U8) {
            throw new IllegalArgumentException(quant.canonicalName() + " scales must be U8, not " + st);
        }
        if (groups == 0) return -1;
        long lastGroup = Math.addExact(firstGroup, groups);
        checkRange(t.codes(), t.codesOffset(), lastGroup, codeBytes, "codes");
        checkRange(t.scales(), t.scalesOffset(), lastGroup, st.bytes(), "scales");
        if (affine) checkRange(t.biases(), t.biasesOffset(), lastGroup, st.bytes(), "biases");
        checkRange(dst, dstOffset, groups, (long) groupSize * bytesPerValue, "dst");
        return switch (st) {
            case BF16 -> BF16;
            case F16 -> F16;
            case F32 -> F32_TYPE;
            case U8 -> -1;
        };
    }

    /**
     * Dequantizes groups {@code [firstGroup, firstGroup+groups)} into {@code groups * groupSize} LE values in
     * {@code format} at {@code dst@dstOffset} ({@link NarrowingDequant}: the same bytes as dequantizing to f32
     * and narrowing afterwards; vector int4 to bf16 into a native {@code dst} in one pass, see {@link #twoPass}).
     * Throws as {@link #dequantize(MlxTensorData, long, long, MemorySegment, long)}.
     */
    public void dequantize(MlxTensorData t, long firstGroup, long groups, FloatFormat format, MemorySegment dst,
                           long dstOffset) {
        Objects.requireNonNull(t, "t");
        if (format == FloatFormat.BF16 && bf16Kernels != null && dst != null && dst.isNative()) {
            affine4Bf16(t, firstGroup, groups, dst, dstOffset);
            return;
        }
        if (firstGroup < 0) throw new IllegalArgumentException("negative group range " + firstGroup + "+" + groups);
        NarrowingDequant.units((first, n, f32, off) -> dequantize(t, firstGroup + first, n, f32, off),
                groups, groupSize, format, dst, dstOffset, impl);
    }

    /** int4 groups straight to bf16 at a native {@code dst}: the fused kernel, one pass, no f32 scratch. */
    private void affine4Bf16(MlxTensorData t, long firstGroup, long groups, MemorySegment dst, long dstOffset) {
        int type = checked(t, firstGroup, groups, dst, dstOffset, 2);
        if (groups == 0) return;
        long sb = t.scaleType().bytes();
        MemorySegment codes = t.codes(), scales = t.scales(), biases = t.biases();
        MethodHandle run = bf16Kernels.forSegments(codes, scales, biases, dst);
        try {
            run.invokeExact(codes, t.codesOffset() + firstGroup * codeBytes, scales, t.scalesOffset() + firstGroup * sb,
                    biases, t.biasesOffset() + firstGroup * sb, type, groups, groupSize, dst, dstOffset);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    private static void checkRange(MemorySegment seg, long base, long count, long unit, String what) {
        long end = Math.addExact(base, Math.multiplyExact(count, unit));
        if (end > seg.byteSize()) {
            throw new IndexOutOfBoundsException(what + ": bytes [" + base + ", " + end + ") outside segment of "
                    + seg.byteSize() + " bytes");
        }
    }
}
