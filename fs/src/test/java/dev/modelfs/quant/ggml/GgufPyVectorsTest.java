package dev.modelfs.quant.ggml;

import static dev.modelfs.quant.ggml.VectorSupport.assertSameFloats;
import static dev.modelfs.quant.ggml.VectorSupport.f32Bits;
import static dev.modelfs.quant.ggml.VectorSupport.hex;
import static dev.modelfs.quant.ggml.VectorSupport.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.quant.BlockDequantizer;
import dev.modelfs.quant.Kernels;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Random-but-valid blocks dequantized by gguf-py 0.19.0's numpy code ({@code ggml_gguf_py_vectors.json},
 * made by {@code tools/gen_gguf_py_vectors.py}): the oracle for the IQ lattice types, which
 * {@code ggml_blocks.json} lacks, and extra coverage for the other types gguf-py implements. Runs under both
 * implementations ({@link Kernels.Impl}).
 */
class GgufPyVectorsTest {
    private static final String RESOURCE = "ggml_gguf_py_vectors.json";
    private static final List<String> GRID_TYPES =
            List.of("IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S", "IQ1_M");
    private static JsonNode types;

    @BeforeAll
    static void load() throws IOException {
        try (InputStream in = GgufPyVectorsTest.class.getResourceAsStream(RESOURCE)) {
            assertNotNull(in, "missing test resource " + RESOURCE);
            types = new ObjectMapper().readTree(in).get("types");
        }
        for (String t : GRID_TYPES) {
            assertTrue(types.has(t), "no gguf-py vectors for " + t);
            assertTrue(types.get(t).get("n_blocks").asInt() >= 20, t + ": fewer than 20 blocks");
        }
    }

    @TestFactory
    List<DynamicTest> ggufPyOracle() {
        final List<DynamicTest> tests = new ArrayList<>();
        for (Kernels.Impl impl : Kernels.Impl.values()) {
            for (Map.Entry<String, JsonNode> e : types.properties()) {
                final String name = e.getKey();
                final JsonNode t = e.getValue();
                tests.add(dynamicTest(impl + " " + name + " (" + t.get("n_blocks").asInt() + " blocks)", () -> {
                    final BlockDequantizer k = GgmlDequantizers.forType(GgmlType.byId(t.get("ggml_type").asInt()), impl);
                    assertEquals(t.get("block_elems").asInt(), k.blockElements(), name);
                    assertEquals(t.get("block_bytes").asInt(), k.blockBytes(), name);
                    final byte[] data = hex(t.get("data_hex").asText());
                    assertEquals(t.get("n_blocks").asInt() * k.blockBytes(), data.length);
                    final int[] expected = f32Bits(hex(t.get("expected_f32_le_hex").asText()));
                    assertSameFloats(impl + " " + name, expected, run(k, data));
                }));
            }
        }
        assertEquals(2 * 23, tests.size(), "types in " + RESOURCE + ", under both implementations");
        return tests;
    }
}
