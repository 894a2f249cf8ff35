package dev.modelfs.quant.mlx;

import dev.modelfs.quant.Kernels;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I32;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Large inputs, called repeatedly, so that the kernels run JIT-compiled (OSR and full C2) and not only interpreted;
 * every call's output is compared with an element-by-element reference. Both {@link Kernels.Impl}s.
 */
class MlxCompiledKernelsTest {

    static List<Object[]> kinds() {
        List<Object[]> out = new ArrayList<>();
        for (int bits : new int[] {2, 3, 4, 5, 6, 8}) {
            for (int g : new int[] {32, 64, 128}) {
                for (ScaleType st : new ScaleType[] {ScaleType.BF16, ScaleType.F16, ScaleType.F32}) {
                    if (bits != 4 && bits != 8 && (g != 64 || st != ScaleType.BF16)) continue; // keep it quick
                    out.add(new Object[] {MlxQuant.affine(bits, g), st, 1f});
                }
            }
        }
        for (String t : new String[] {"nvfp4", "mxfp4", "mxfp8"}) {
            out.add(new Object[] {MlxQuant.of(t, null), ScaleType.U8, 1f});
            out.add(new Object[] {MlxQuant.of(t, null), ScaleType.U8, 0.0123f});
        }
        List<Object[]> both = new ArrayList<>();
        for (Kernels.Impl impl : Kernels.Impl.values()) {
            for (Object[] k : out) both.add(new Object[] {k[0], k[1], k[2], impl});
        }
        return both;
    }

    @ParameterizedTest(name = "{0} {1} global {2} {3}")
    @MethodSource("kinds")
    void compiledKernelsMatchReference(MlxQuant q, ScaleType st, float global, Kernels.Impl impl) {
        int groups = 4096;
        Random rnd = new Random(q.hashCode() * 31L + st.ordinal());
        try (Arena arena = Arena.ofConfined()) {
            MlxDequantizerPropertiesTest.Tensor t =
                    MlxDequantizerPropertiesTest.randomTensor(arena, q, st, groups, rnd, 1, global, true);
            int gs = q.groupSize();
            float[] ref = new float[groups * gs];
            for (int i = 0; i < ref.length; i++) ref[i] = MlxDequantizerPropertiesTest.reference(q, t, i, global);
            MlxDequantizer dq = MlxDequantizer.of(q, impl);
            MemorySegment dst = arena.allocate(4L * ref.length + 8, 1);
            for (int call = 0; call < 12; call++) {
                int first = call == 0 ? 0 : rnd.nextInt(groups / 2);
                int n = call == 0 ? groups : 1 + rnd.nextInt(groups - first);
                int pad = call & 3;
                dq.dequantize(t.data(), first, n, dst, pad);
                for (int i = 0; i < n * gs; i++) {
                    int e = first * gs + i;
                    int want = Float.floatToRawIntBits(ref[e]);
                    int got = dst.get(I32, pad + 4L * i);
                    if (want != got && !(Float.isNaN(ref[e]) && Float.isNaN(dst.get(F32, pad + 4L * i)))) {
                        assertEquals(want, got, "call " + call + " element " + e);
                    }
                }
            }
        }
    }
}
