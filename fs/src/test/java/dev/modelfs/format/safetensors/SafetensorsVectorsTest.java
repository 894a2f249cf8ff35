package dev.modelfs.format.safetensors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.FormatException;
import dev.modelfs.format.Vectors;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every case of {@code vectors/safetensors_cases.json}. */
class SafetensorsVectorsTest {

    static List<JsonNode> cases() {
        List<JsonNode> out = new ArrayList<>();
        Vectors.json("safetensors_cases.json").get("cases").forEach(out::add);
        return out;
    }

    static byte[] bytesOf(JsonNode c) {
        return HexFormat.of().parseHex(c.get("hex").asText());
    }

    @Test
    void vectorFileHasAllCases() {
        List<JsonNode> cases = cases();
        assertEquals(17, cases.size(), "case count in safetensors_cases.json");
        assertTrue(cases.stream().anyMatch(c -> c.get("valid").asBoolean()));
        assertTrue(cases.stream().anyMatch(c -> !c.get("valid").asBoolean()));
    }

    @TestFactory
    Stream<DynamicTest> everyCase() {
        return cases().stream().map(c -> DynamicTest.dynamicTest(c.get("name").asText(), () -> check(c)));
    }

    private static void check(JsonNode c) {
        MemorySegment file = MemorySegment.ofArray(bytesOf(c));
        if (!c.get("valid").asBoolean()) {
            FormatException e = assertThrows(FormatException.class, () -> SafetensorsParser.parse(file));
            assertTrue(e.getMessage() != null && !e.getMessage().contains("\n"), "one-line message");
            Matcher named = Pattern.compile("\\w+\\((.+)\\)").matcher(c.get("error").asText());
            if (named.matches()) {
                assertTrue(e.getMessage().contains("\"" + named.group(1) + "\""),
                        "message names tensor " + named.group(1) + ": " + e.getMessage());
            }
            return;
        }
        SafetensorsHeader h = SafetensorsParser.parse(file);
        assertEquals(c.get("header_len").asLong(), h.headerLength());
        assertEquals(c.get("data_start").asLong(), h.dataStart());

        JsonNode meta = c.get("metadata");
        if (meta.isNull()) {
            assertNull(h.metadata());
        } else {
            Map<String, String> expected = new LinkedHashMap<>();
            meta.properties().forEach(e -> expected.put(e.getKey(), e.getValue().asText()));
            assertEquals(expected, h.metadata());
        }

        JsonNode tensors = c.get("tensors");
        assertEquals(tensors.size(), h.tensors().size());
        for (Map.Entry<String, JsonNode> e : tensors.properties()) {
            JsonNode t = e.getValue();
            TensorEntry got = h.get(e.getKey());
            assertNotNull(got, "tensor " + e.getKey());
            assertEquals(e.getKey(), got.name());
            assertEquals(Dtype.parse(t.get("dtype").asText()), got.dtype());
            long[] shape = new long[t.get("shape").size()];
            for (int i = 0; i < shape.length; i++) {
                shape[i] = t.get("shape").get(i).asLong();
            }
            assertArrayEquals(shape, got.shape());
            assertEquals(t.get("data_offsets").get(0).asLong(), got.begin());
            assertEquals(t.get("data_offsets").get(1).asLong(), got.end());
            assertEquals(t.get("abs_begin").asLong(), h.dataStart() + got.begin());
            assertEquals(t.get("abs_end").asLong(), h.dataStart() + got.end());
        }
    }

    @Test
    void tensorsComeInHeaderJsonOrderNotDataOrder() {
        JsonNode c = cases().stream().filter(x -> x.get("name").asText().equals("ollama_mlx_int4_combined"))
                .findFirst().orElseThrow();
        SafetensorsHeader h = SafetensorsParser.parse(MemorySegment.ofArray(bytesOf(c)));
        assertEquals(List.of("w.weight", "w.weight.bias", "w.weight.scale"),
                h.tensors().stream().map(TensorEntry::name).toList());
        assertEquals(List.of("group_size", "quant_type"), List.copyOf(h.metadata().keySet()));
    }
}
