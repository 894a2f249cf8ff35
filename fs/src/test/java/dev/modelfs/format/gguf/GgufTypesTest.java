package dev.modelfs.format.gguf;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.FormatException;
import dev.modelfs.format.Vectors;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link GgmlType}, {@link GgufValueType} and the value records. */
class GgufTypesTest {

    @Test
    void ggmlTypeIds() {
        Set<Integer> removed = Set.of(4, 5, 31, 32, 33, 36, 37, 38);
        for (int id = -2; id < 50; id++) {
            int i = id;
            if (id >= 0 && id <= 42 && !removed.contains(id)) {
                assertEquals(id, GgmlType.byId(id).id());
            } else {
                assertThrows(FormatException.class, () -> GgmlType.byId(i));
            }
        }
        assertEquals(35, GgmlType.values().length);
        assertEquals(GgmlType.Q4_K, GgmlType.byId(12));
        assertEquals(144, GgmlType.Q4_K.blockBytes());
        assertTrue(GgmlType.Q4_K.isQuantized());
        assertFalse(GgmlType.BF16.isQuantized());
        assertTrue(GgmlType.I64.isInteger());
        assertFalse(GgmlType.F32.isInteger());
    }

    /**
     * The whole table against the spec's (docs/FORMATS.md §6.2, as recorded independently in the
     * {@code type_table} of the test vector ggml_blocks.json): same names, ids and block sizes, and no
     * type on either side that the other lacks.
     */
    @Test
    void ggmlTypeTableMatchesTheSpec() {
        JsonNode table = Vectors.json("ggml_blocks.json").get("type_table");
        Set<GgmlType> seen = EnumSet.noneOf(GgmlType.class);
        for (Map.Entry<String, JsonNode> e : table.properties()) {
            GgmlType t = GgmlType.valueOf(e.getKey());
            assertEquals(e.getValue().get("id").asInt(), t.id(), "id of " + t);
            assertEquals(e.getValue().get("block_elems").asInt(), t.blockElements(), "block elements of " + t);
            assertEquals(e.getValue().get("block_bytes").asInt(), t.blockBytes(), "block bytes of " + t);
            assertEquals(t, GgmlType.byId(t.id()));
            seen.add(t);
        }
        assertEquals(EnumSet.allOf(GgmlType.class), seen, "types missing from the spec's table");
    }

    @Test
    void rowBytes() {
        assertEquals(18 * 4, GgmlType.Q4_0.rowBytes(128));
        assertEquals(0, GgmlType.Q4_0.rowBytes(0));
        assertEquals(12, GgmlType.F32.rowBytes(3));
        assertEquals(17, GgmlType.MXFP4.rowBytes(32));
        assertThrows(FormatException.class, () -> GgmlType.Q4_0.rowBytes(16));
        assertThrows(FormatException.class, () -> GgmlType.F32.rowBytes(-1));
        assertThrows(FormatException.class, () -> GgmlType.F64.rowBytes(Long.MAX_VALUE));
    }

    @Test
    void valueTypeIds() {
        for (GgufValueType t : GgufValueType.values()) {
            assertEquals(t, GgufValueType.byId(t.id()));
        }
        assertEquals(GgufValueType.UINT64, GgufValueType.byId(10));
        assertThrows(FormatException.class, () -> GgufValueType.byId(13));
        assertThrows(FormatException.class, () -> GgufValueType.byId(-1));
    }

    @Test
    void kvAndArrayCheckJavaTypes() {
        assertThrows(FormatException.class, () -> new GgufKv("k", GgufValueType.UINT32, 1L, 0, 0));
        assertThrows(FormatException.class, () -> new GgufKv("k", GgufValueType.STRING, null, 0, 0));
        assertThrows(FormatException.class, () -> new GgufArray(GgufValueType.ARRAY, java.util.List.of()));
        assertThrows(FormatException.class, () -> new GgufArray(GgufValueType.INT32, java.util.List.of(1, 2L)));
        assertEquals(4_000_000_000L, new GgufKv("k", GgufValueType.UINT32, (int) 4_000_000_000L, 0, 0).asLong());
        assertEquals(200, new GgufKv("k", GgufValueType.UINT8, (byte) 200, 0, 0).asLong());
        assertEquals(-56, new GgufKv("k", GgufValueType.INT8, (byte) 200, 0, 0).asLong());
        assertThrows(FormatException.class, () -> new GgufKv("k", GgufValueType.UINT64, -1L, 0, 0).asLong());
        assertThrows(FormatException.class, () -> new GgufKv("k", GgufValueType.STRING, "x", 0, 0).asLong());
        assertEquals("x", new GgufKv("k", GgufValueType.STRING, "x", 0, 0).asString());
    }

    @Test
    void tensorInfo() {
        GgufTensorInfo t = new GgufTensorInfo("w", new long[]{256, 3, 2}, GgmlType.Q6_K, 64);
        assertEquals(256 * 6, t.elements());
        assertEquals(210 * 6, t.byteSize());
        assertArrayEquals(new long[]{2, 3, 256}, t.shape());
        t.ne()[0] = 1;
        assertEquals(256, t.ne()[0]);
        assertThrows(FormatException.class, () -> new GgufTensorInfo("w", new long[]{1, 1, 1, 1, 1}, GgmlType.F32, 0));
        assertThrows(FormatException.class, () -> new GgufTensorInfo("w", new long[]{-1}, GgmlType.F32, 0));
        assertThrows(FormatException.class, () -> new GgufTensorInfo("w", new long[]{1}, GgmlType.F32, -32));
        assertThrows(FormatException.class, () -> new GgufTensorInfo("w", new long[]{}, GgmlType.Q8_0, 0));
        assertThrows(FormatException.class,
                () -> new GgufTensorInfo("w", new long[]{1L << 31, 1L << 31, 1L << 2}, GgmlType.F32, 0));
        assertEquals(new GgufTensorInfo("w", new long[]{4}, GgmlType.F32, 0),
                new GgufTensorInfo("w", new long[]{4}, GgmlType.F32, 0));
    }
}
