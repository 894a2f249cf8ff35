package dev.modelfs.quant.ggml;

import dev.modelfs.format.Vectors;

import static dev.modelfs.quant.ggml.VectorSupport.assertSameFloats;
import static dev.modelfs.quant.ggml.VectorSupport.f32Bits;
import static dev.modelfs.quant.ggml.VectorSupport.hex;
import static dev.modelfs.quant.ggml.VectorSupport.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.quant.BlockDequantizer;
import dev.modelfs.quant.Kernels;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every block of {@code ggml_blocks.json} (docs/FORMATS.md §10), bit for bit, read through
 * {@link Vectors}, under both implementations ({@link Kernels.Impl}); a missing file FAILS.
 */
class GgmlBlocksVectorsTest {
    private static JsonNode root;

    @BeforeAll
    static void load() throws IOException {
        root = Vectors.json("ggml_blocks.json");
    }

    @TestFactory
    List<DynamicTest> everyBlockBitExact() {
        final List<DynamicTest> tests = new ArrayList<>();
        final JsonNode types = root.get("types");
        assertTrue(types.size() >= 21, "ggml_blocks.json lists " + types.size() + " types");
        for (Kernels.Impl impl : Kernels.Impl.values()) {
            for (Map.Entry<String, JsonNode> t : types.properties()) {
                final String name = t.getKey();
                final JsonNode type = t.getValue();
                int i = 0;
                for (JsonNode c : type.get("cases")) {
                    final int caseNo = i++;
                    tests.add(dynamicTest(impl + " " + name + " case " + caseNo + ": " + c.get("description").asText(), () -> {
                        final BlockDequantizer k = GgmlDequantizers.forType(GgmlType.byId(type.get("ggml_type").asInt()), impl);
                        assertEquals(type.get("block_elems").asInt(), k.blockElements(), name + " block elements");
                        assertEquals(type.get("block_bytes").asInt(), k.blockBytes(), name + " block bytes");
                        final byte[] data = hex(c.get("data_hex").asText());
                        if (c.has("n_blocks")) {
                            assertEquals(c.get("n_blocks").asInt() * k.blockBytes(), data.length);
                        }
                        final int[] expected = f32Bits(hex(c.get("expected_f32_le_hex").asText()));
                        assertEquals(c.get("expected_f32").size(), expected.length);
                        assertSameFloats(impl + " " + name + " case " + caseNo, expected, run(k, data));
                    }));
                }
            }
        }
        assertFalse(tests.isEmpty());
        return tests;
    }

    /** ggml's scale decoders against all 256 codes of the shared {@code fp_tables.json}. */
    @Test
    void fp4ScaleDecodersMatchFpTables() throws IOException {
        final JsonNode fp = Vectors.json("fp_tables.json");
        final JsonNode ue4m3 = fp.get("ue4m3_ggml_x0_5");
        final JsonNode e8m0 = fp.get("e8m0_ggml_half");
        assertEquals(256, ue4m3.size());
        assertEquals(256, e8m0.size());
        for (int x = 0; x < 256; x++) {
            assertEquals(Float.floatToRawIntBits((float) ue4m3.get(x).asDouble()),
                    Float.floatToRawIntBits(LegacyKernels.UE4M3_HALF[x]), "ue4m3 code " + x);
            assertEquals(Float.floatToRawIntBits((float) e8m0.get(x).asDouble()),
                    Float.floatToRawIntBits(LegacyKernels.e8m0Half(x)), "e8m0 code " + x);
        }
        final JsonNode kv = fp.get("e2m1_doubled_ggml_kvalues_fp4");
        for (int c = 0; c < 16; c++) {
            assertEquals(kv.get(c).asInt(), LegacyKernels.KVALUES_FP4[c], "kvalues_fp4[" + c + "]");
            assertEquals(fp.get("iq4nl_kvalues").get(c).asInt(), LegacyKernels.KVALUES_IQ4NL[c], "kvalues_iq4nl[" + c + "]");
        }
    }

    /** Block sizes of every id in the file's type table; integer types are rejected. */
    @Test
    void typeTable() {
        final Set<String> ints = Set.of("I8", "I16", "I32", "I64");
        int checked = 0;
        for (Map.Entry<String, JsonNode> e : root.get("type_table").properties()) {
            final int id = e.getValue().get("id").asInt();
            if (ints.contains(e.getKey())) {
                assertThrows(IllegalArgumentException.class, () -> GgmlDequantizers.forType(GgmlType.byId(id)), e.getKey());
                continue;
            }
            final BlockDequantizer k = GgmlDequantizers.forType(GgmlType.byId(id));
            assertEquals(e.getValue().get("block_elems").asInt(), k.blockElements(), e.getKey());
            assertEquals(e.getValue().get("block_bytes").asInt(), k.blockBytes(), e.getKey());
            checked++;
        }
        assertEquals(31, checked, "float and quantized types in the type table");
    }
}
