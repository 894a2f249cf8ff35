package dev.modelfs.quant.mlx;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.quant.FloatCasts;
import dev.modelfs.quant.FloatFormat;
import dev.modelfs.quant.Kernels;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static dev.modelfs.format.LittleEndian.I16;
import static dev.modelfs.format.LittleEndian.I32;
import static dev.modelfs.quant.mlx.MlxTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

/** Every case of {@code vectors/mlx_quant.json}, bit for bit. */
class MlxVectorsTest {

    /** One decoded vector case. */
    record Case(String name, JsonNode json, MlxQuant quant, byte[] codes, byte[] scales, ScaleType scaleType,
                byte[] biases, float globalScale, int[] expectedBits) {}

    static List<Case> cases() {
        JsonNode root = vectors("mlx_quant.json");
        List<Case> out = new ArrayList<>();
        for (JsonNode c : root.get("cases")) {
            MlxMode mode = MlxMode.valueOf(c.get("mode").asText().toUpperCase(Locale.ROOT));
            MlxQuant q = new MlxQuant(mode, c.get("bits").asInt(), c.get("group_size").asInt());
            byte[] codes = hex(c.get("weight").get("le_hex").asText());
            JsonNode scale = c.get("scale");
            ScaleType st = ScaleType.valueOf(scale.get("dtype").asText());
            byte[] scales = scalarBytes(scale, st);
            byte[] biases = c.has("bias") ? scalarBytes(c.get("bias"), ScaleType.valueOf(c.get("bias").get("dtype").asText())) : null;
            float g = c.has("global_scale") ? jsonFloat(c.get("global_scale").get("value")) : 1f;
            byte[] exp = hex(c.get("expected_f32_le_hex").asText());
            int[] expBits = new int[exp.length / 4];
            MemorySegment es = MemorySegment.ofArray(exp);
            for (int i = 0; i < expBits.length; i++) expBits[i] = es.get(I32, 4L * i);
            out.add(new Case(c.get("name").asText() + " [" + c.get("quant_type").asText() + "]", c, q, codes, scales, st,
                    biases, g, expBits));
        }
        assertEquals(8, out.size(), "mlx_quant.json case count");
        return out;
    }

    private static byte[] scalarBytes(JsonNode n, ScaleType st) {
        return switch (st) {
            case U8 -> {
                JsonNode b = n.get("bytes");
                byte[] out = new byte[b.size()];
                for (int i = 0; i < out.length; i++) out[i] = (byte) b.get(i).asInt();
                yield out;
            }
            case BF16 -> {
                JsonNode b = n.get("bf16_bits");
                byte[] out = new byte[2 * b.size()];
                MemorySegment s = MemorySegment.ofArray(out);
                for (int i = 0; i < b.size(); i++) s.set(I16, 2L * i, (short) b.get(i).asInt());
                yield out;
            }
            default -> throw new AssertionError("vector scale dtype not handled: " + st);
        };
    }

    private static float[] run(Case c, Arena arena, int pad, int dstPad, boolean heap, Kernels.Impl impl) {
        MemorySegment codes = heap ? heapAt(c.codes, pad) : at(arena, c.codes, pad);
        MemorySegment scales = heap ? heapAt(c.scales, pad + 1) : at(arena, c.scales, pad + 1);
        MemorySegment biases = c.biases == null ? null : heap ? heapAt(c.biases, pad + 2) : at(arena, c.biases, pad + 2);
        MlxTensorData t = new MlxTensorData(codes, pad, scales, pad + 1, c.scaleType, biases, c.biases == null ? 0 : pad + 2,
                c.globalScale);
        int n = c.expectedBits.length;
        long groups = n / c.quant.groupSize();
        MemorySegment dst = heap ? MemorySegment.ofArray(new byte[dstPad + 4 * n]) : arena.allocate(dstPad + 4L * n, 1);
        MlxDequantizer.of(c.quant, impl).dequantize(t, 0, groups, dst, dstPad);
        return readF32(dst, dstPad, n);
    }

    /**
     * The case dequantized straight to bf16 by the format overload into a native destination at an odd offset
     * (int4: the fused kernel), as a heap copy.
     */
    private static MemorySegment runBf16(Case c, Arena arena, Kernels.Impl impl) {
        MlxTensorData t = new MlxTensorData(at(arena, c.codes, 1), 1, at(arena, c.scales, 2), 2, c.scaleType,
                c.biases == null ? null : at(arena, c.biases, 3), c.biases == null ? 0 : 3, c.globalScale);
        int n = c.expectedBits.length;
        MemorySegment dst = arena.allocate(3 + 2L * n, 1);
        MlxDequantizer.of(c.quant, impl).dequantize(t, 0, n / c.quant.groupSize(), FloatFormat.BF16, dst, 3);
        return MemorySegment.ofArray(dst.asSlice(3).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
    }

    private static MemorySegment heapAt(byte[] bytes, int pad) {
        byte[] a = new byte[pad + bytes.length];
        System.arraycopy(bytes, 0, a, pad, bytes.length);
        return MemorySegment.ofArray(a);
    }

    @TestFactory
    List<DynamicTest> dequantizesEveryCaseBitExactly() {
        List<DynamicTest> tests = new ArrayList<>();
        for (Case c : cases()) {
            for (Kernels.Impl impl : Kernels.Impl.values()) {
                for (int pad : new int[] {0, 3}) {
                    for (boolean heap : new boolean[] {false, true}) {
                        tests.add(DynamicTest.dynamicTest(c.name + " " + impl + " pad " + pad + (heap ? " heap" : " native"), () -> {
                            try (Arena arena = Arena.ofConfined()) {
                                float[] out = run(c, arena, pad, pad == 0 ? 0 : 5, heap, impl);
                                assertEquals(c.json.get("logical_shape").get(0).asInt() * c.json.get("logical_shape").get(1).asInt(),
                                        out.length);
                                for (int i = 0; i < out.length; i++) {
                                    int got = Float.floatToRawIntBits(out[i]);
                                    int idx = i;
                                    assertEquals(c.expectedBits[i], got, () -> "element " + idx + ": expected "
                                            + Float.intBitsToFloat(c.expectedBits[idx]) + " got " + Float.intBitsToFloat(got));
                                }
                            }
                        }));
                    }
                }
            }
        }
        return tests;
    }

    /** The f32 results, then rounded to bf16 one value at a time and in bulk by each implementation. */
    @TestFactory
    List<DynamicTest> bf16RoundingMatchesVectors() {
        List<DynamicTest> tests = new ArrayList<>();
        int withBf16 = 0;
        for (Case c : cases()) {
            if (!c.json.has("expected_bf16_rounded")) continue;
            withBf16++;
            for (Kernels.Impl impl : Kernels.Impl.values()) {
                tests.add(DynamicTest.dynamicTest(c.name + " " + impl, () -> {
                    float[] out;
                    MemorySegment bulk = MemorySegment.ofArray(new byte[0]);
                    MemorySegment direct;
                    try (Arena arena = Arena.ofConfined()) {
                        out = run(c, arena, 0, 0, false, impl);
                        MemorySegment f32 = arena.allocate(4L * out.length + 1, 1);
                        MemorySegment.copy(MemorySegment.ofArray(out), 0, f32, 1, 4L * out.length);
                        MemorySegment bf16 = arena.allocate(2L * out.length + 3, 1);
                        FloatCasts.f32ToBf16(f32, 1, bf16, 3, out.length, impl);
                        bulk = MemorySegment.ofArray(bf16.asSlice(3).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
                        direct = runBf16(c, arena, impl);
                    }
                    JsonNode exp = c.json.get("expected_bf16_rounded");
                    assertEquals(exp.size(), out.length);
                    for (int i = 0; i < out.length; i++) {
                        float want = jsonFloat(exp.get(i));
                        short h = FloatCasts.f32ToBf16(out[i]);
                        assertEquals(Float.floatToRawIntBits(want) >>> 16, h & 0xFFFF, "element " + i);
                        assertEquals(Float.floatToRawIntBits(want), Float.floatToRawIntBits(FloatCasts.bf16ToF32(h)), "element " + i);
                        assertEquals(Float.floatToRawIntBits(want) >>> 16, bulk.get(I16, 2L * i) & 0xFFFF, "bulk element " + i);
                        assertEquals(Float.floatToRawIntBits(want) >>> 16, direct.get(I16, 2L * i) & 0xFFFF,
                                "straight-to-bf16 element " + i);
                    }
                }));
            }
        }
        assertTrue(withBf16 >= 3, "expected bf16 roundings for the affine cases");
        return tests;
    }

    @Test
    void vectorFileIsSelfConsistent() {
        for (Case c : cases()) {
            JsonNode j = c.json;
            // decimal list == le_hex image
            JsonNode f = j.get("expected_f32");
            assertEquals(f.size(), c.expectedBits.length, c.name);
            for (int i = 0; i < f.size(); i++) {
                assertEquals(c.expectedBits[i], Float.floatToRawIntBits(jsonFloat(f.get(i))), c.name + " element " + i);
            }
            // the test's reference packer reproduces the stored bytes from the listed codes
            JsonNode codes = j.get("codes");
            int[] q = new int[codes.size()];
            for (int i = 0; i < q.length; i++) q[i] = codes.get(i).asInt();
            assertArrayEquals(c.codes, packBitStream(q, c.quant.bits()), c.name + " packing");
            // quant_type strings that are real type names parse to the same parameters
            String qt = j.get("quant_type").asText();
            if (!qt.contains(" ")) {
                assertEquals(c.quant, MlxQuant.of(qt, j.get("group_size").asInt()), c.name);
                assertEquals(c.quant, MlxQuant.of(qt, null), c.name + " default group size");
            }
        }
    }

    /** The cases again, recomputed from codes and decoded scale values with the §5 formulas. */
    @Test
    void formulasReproduceVectors() {
        for (Case c : cases()) {
            JsonNode j = c.json;
            JsonNode codes = j.get("codes");
            int gs = c.quant.groupSize();
            for (int i = 0; i < codes.size(); i++) {
                int q = codes.get(i).asInt();
                float want = switch (c.quant.mode()) {
                    case AFFINE -> {
                        float s = jsonFloat(j.get("scale").get("values").get(i / gs));
                        float b = jsonFloat(j.get("bias").get("values").get(i / gs));
                        float prod = s * q;
                        yield prod + b;
                    }
                    case NVFP4, MXFP4 -> {
                        float p = MlxFloatCodes.e2m1(q) * jsonFloat(j.get("scale").get("decoded").get(i / gs));
                        yield c.globalScale == 1f ? p : p * c.globalScale;
                    }
                    case MXFP8 -> MlxFloatCodes.e4m3(q) * jsonFloat(j.get("scale").get("decoded").get(i / gs));
                };
                assertEquals(c.expectedBits[i], Float.floatToRawIntBits(want), c.name + " element " + i);
            }
        }
    }
}
