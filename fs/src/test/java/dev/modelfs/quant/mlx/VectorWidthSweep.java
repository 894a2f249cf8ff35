package dev.modelfs.quant.mlx;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I16;

import dev.modelfs.quant.FloatCasts;
import dev.modelfs.quant.FloatFormat;
import dev.modelfs.quant.Kernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Compares {@link Kernels.Impl#VECTOR} with {@link Kernels.Impl#SCALAR} byte for byte over every vector kernel
 * (MLX affine 4/8 with each group size and scale type, nvfp4, mxfp4, mxfp8 with and without a global scale, the
 * bf16 and f16 casts) on deterministic random data, several range lengths and offsets, repeated so that the JIT
 * compiles the loops. A {@code main} so that {@link VectorWidthsTest} can run it in a JVM whose vectors are narrower
 * than this machine's (the 256-bit code paths). Scales and biases are finite or infinite but never NaN, so every
 * output byte is defined by the scalar path.
 */
final class VectorWidthSweep {

    private VectorWidthSweep() {}

    /** Prints {@code ok <bits> <cases>}; throws on the first difference. */
    public static void main(String[] args) {
        System.out.println("ok " + Kernels.vectorBits() + " " + run(3));
    }

    /** Runs the sweep {@code rounds} times; returns the number of cases compared. */
    static int run(int rounds) {
        List<MlxQuant> quants = new ArrayList<>();
        for (int bits : new int[] {4, 8}) {
            for (int g : new int[] {32, 64, 128}) quants.add(MlxQuant.affine(bits, g));
        }
        for (String t : new String[] {"nvfp4", "mxfp4", "mxfp8"}) quants.add(MlxQuant.of(t, null));
        int cases = 0;
        Random rnd = new Random(11);
        try (Arena arena = Arena.ofConfined()) {
            for (int round = 0; round < rounds; round++) {
                for (MlxQuant q : quants) {
                    boolean affine = q.mode() == MlxMode.AFFINE;
                    for (ScaleType st : affine ? new ScaleType[] {ScaleType.BF16, ScaleType.F16, ScaleType.F32}
                            : new ScaleType[] {ScaleType.U8}) {
                        for (int groups : new int[] {1, 3, 17, 301}) {
                            float global = !affine && (groups & 2) != 0 ? 0.0123f : 1f;
                            compare(arena, q, st, groups, 1 + (groups & 1), 3 - (groups & 3), global, rnd);
                            cases++;
                        }
                    }
                }
                for (int count : new int[] {1, 15, 16, 17, 1000, 20_003}) {
                    compareCasts(arena, count, count & 7, (count >>> 1) & 7, rnd);
                    cases++;
                }
            }
        }
        return cases;
    }

    private static void compare(Arena arena, MlxQuant q, ScaleType st, int groups, int first, int pad, float global,
                                Random rnd) {
        int total = first + groups;
        boolean affine = q.mode() == MlxMode.AFFINE;
        MemorySegment codes = arena.allocate(pad + (long) total * q.codeBytesPerGroup(), 1);
        for (long i = 0; i < codes.byteSize(); i++) codes.set(ValueLayout.JAVA_BYTE, i, (byte) rnd.nextInt());
        MemorySegment scales = arena.allocate(pad + (long) total * st.bytes(), 1);
        MemorySegment biases = affine ? arena.allocate(pad + (long) total * st.bytes(), 1) : null;
        for (int g = 0; g < total; g++) {
            if (affine) {
                put(scales, pad, st, g, rnd.nextInt(50) == 0 ? Float.POSITIVE_INFINITY
                        : rnd.nextInt(50) == 0 ? 0x1p-140f : (float) (rnd.nextGaussian() * 0.02));
                put(biases, pad, st, g, (float) (rnd.nextGaussian() * 0.1));
            } else {
                scales.set(ValueLayout.JAVA_BYTE, pad + g, (byte) rnd.nextInt());
            }
        }
        MlxTensorData t = new MlxTensorData(codes, pad, scales, pad, st, biases, pad, global);
        long out = 4L * groups * q.groupSize();
        byte[][] results = new byte[6][];
        for (Kernels.Impl impl : Kernels.Impl.values()) {
            MlxDequantizer dq = MlxDequantizer.of(q, impl);
            // native bf16 output: int4 takes the fused kernel (the heap one below dequantizes to f32, then narrows)
            MemorySegment direct = arena.allocate(out / 2 + 1, 1);
            dq.dequantize(t, first, groups, FloatFormat.BF16, direct, 1);
            results[4 + impl.ordinal()] = direct.asSlice(1).toArray(ValueLayout.JAVA_BYTE);
            MemorySegment dst = arena.allocate(out + 2, 1);
            dq.dequantize(t, first, groups, dst, 2);
            results[impl.ordinal()] = dst.toArray(ValueLayout.JAVA_BYTE);
            MemorySegment bf16 = MemorySegment.ofArray(new byte[(int) (out / 2)]);
            dq.dequantize(t, first, groups, FloatFormat.BF16, bf16, 0);
            results[2 + impl.ordinal()] = bf16.toArray(ValueLayout.JAVA_BYTE);
        }
        String what = q.canonicalName() + " " + st + " groups " + groups + " global " + global;
        check(results[0], results[1], what + " f32");
        check(results[2], results[3], what + " bf16");
        check(results[2], results[4], what + " bf16 straight into native memory, SCALAR");
        check(results[2], results[5], what + " bf16 straight into native memory, VECTOR");
    }

    private static void put(MemorySegment seg, int pad, ScaleType st, int g, float v) {
        switch (st) {
            case BF16 -> seg.set(I16, pad + 2L * g, FloatCasts.f32ToBf16(v));
            case F16 -> seg.set(I16, pad + 2L * g, Float.floatToFloat16(v));
            case F32 -> seg.set(F32, pad + 4L * g, v);
            case U8 -> throw new IllegalArgumentException("U8");
        }
    }

    private static void compareCasts(Arena arena, int count, int srcPad, int dstPad, Random rnd) {
        MemorySegment src = arena.allocate(srcPad + 4L * count, 1);
        for (long i = 0; i < src.byteSize(); i++) src.set(ValueLayout.JAVA_BYTE, i, (byte) rnd.nextInt());
        byte[][] results = new byte[4][];
        for (Kernels.Impl impl : Kernels.Impl.values()) {
            MemorySegment dst = arena.allocate(dstPad + 2L * count, 1);
            FloatCasts.f32ToBf16(src, srcPad, dst, dstPad, count, impl);
            results[impl.ordinal()] = dst.toArray(ValueLayout.JAVA_BYTE);
            FloatCasts.f32ToF16(src, srcPad, dst, dstPad, count, impl);
            results[2 + impl.ordinal()] = dst.toArray(ValueLayout.JAVA_BYTE);
        }
        check(results[0], results[1], "bf16 cast of " + count);
        check(results[2], results[3], "f16 cast of " + count);
    }

    private static void check(byte[] scalar, byte[] vector, String what) {
        if (!Arrays.equals(scalar, vector)) {
            throw new AssertionError(what + ": VECTOR differs from SCALAR at byte " + Arrays.mismatch(scalar, vector)
                    + " (" + Kernels.describe() + ")");
        }
    }
}
