package dev.modelfs.format.gguf;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.Vectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** {@code sampler.gguf} and {@code tiny-llama.gguf} against their JSON companions, read and re-encoded. */
class GgufVectorsTest {

    static final Map<String, GgufValueType> TYPE_NAMES = Map.ofEntries(
            Map.entry("u8", GgufValueType.UINT8), Map.entry("i8", GgufValueType.INT8),
            Map.entry("u16", GgufValueType.UINT16), Map.entry("i16", GgufValueType.INT16),
            Map.entry("u32", GgufValueType.UINT32), Map.entry("i32", GgufValueType.INT32),
            Map.entry("f32", GgufValueType.FLOAT32), Map.entry("bool", GgufValueType.BOOL),
            Map.entry("str", GgufValueType.STRING), Map.entry("arr", GgufValueType.ARRAY),
            Map.entry("u64", GgufValueType.UINT64), Map.entry("i64", GgufValueType.INT64),
            Map.entry("f64", GgufValueType.FLOAT64));

    static byte[] bytes(String name) {
        return Vectors.bytes(name);
    }

    static GgufFile read(byte[] b) {
        return GgufReader.read(MemorySegment.ofArray(b));
    }

    @ParameterizedTest
    @ValueSource(strings = {"sampler.gguf", "tiny-llama.gguf"})
    void headerMatchesJson(String name) {
        byte[] b = bytes(name);
        JsonNode j = Vectors.json(name + ".json");
        assertEquals(j.get("size").asLong(), b.length);
        GgufFile f = read(b);
        assertEquals(j.get("alignment").asLong(), f.alignment());
        assertEquals(j.get("data_section_start").asLong(), f.dataStart());
        assertEquals(j.has("version") ? j.get("version").asInt() : 3, f.version());
        if (j.has("kv_count")) {
            assertEquals(j.get("kv_count").asInt(), f.kvs().size());
            assertEquals(j.get("tensor_count").asInt(), f.tensors().size());
        }

        JsonNode kvs = j.get("kv");
        assertEquals(kvs.size(), f.kvs().size());
        for (int i = 0; i < kvs.size(); i++) {
            JsonNode e = kvs.get(i);
            GgufKv kv = f.kvs().get(i);
            String where = name + " " + e.get("key").asText();
            assertEquals(e.get("key").asText(), kv.key(), where);
            assertSame(kv, f.kv(kv.key()));
            GgufValueType type = TYPE_NAMES.get(e.get("type").asText());
            assertNotNull(type, where + " type name " + e.get("type"));
            assertEquals(type, kv.type(), where);
            if (e.has("type_id")) {
                assertEquals(e.get("type_id").asInt(), kv.type().id(), where);
            }
            if (type == GgufValueType.ARRAY) {
                GgufArray a = assertInstanceOf(GgufArray.class, kv.value(), where);
                JsonNode v = e.get("value");
                GgufValueType et = TYPE_NAMES.get(v.get("elem_type").asText());
                assertEquals(et, a.elementType(), where);
                if (v.has("elem_type_id")) {
                    assertEquals(v.get("elem_type_id").asInt(), a.elementType().id(), where);
                }
                assertEquals(v.get("values").size(), a.size(), where);
                for (int k = 0; k < a.size(); k++) {
                    assertValue(et, v.get("values").get(k), a.values().get(k), where + "[" + k + "]");
                }
            } else {
                assertValue(type, e.get("value"), kv.value(), where);
            }
        }

        JsonNode ts = j.get("tensors");
        assertEquals(ts.size(), f.tensors().size());
        for (int i = 0; i < ts.size(); i++) {
            JsonNode e = ts.get(i);
            GgufTensorInfo t = f.tensors().get(i);
            String where = name + " tensor " + e.get("name").asText();
            assertEquals(e.get("name").asText(), t.name(), where);
            assertSame(t, f.tensor(t.name()));
            long[] ne = new long[e.get("ne").size()];
            for (int d = 0; d < ne.length; d++) {
                ne[d] = e.get("ne").get(d).asLong();
            }
            assertArrayEquals(ne, t.ne(), where);
            long[] shape = t.shape();
            for (int d = 0; d < ne.length; d++) {
                assertEquals(ne[d], shape[ne.length - 1 - d], where);
            }
            assertEquals(e.get("ggml_type").asInt(), t.type().id(), where);
            if (e.has("type_name")) {
                assertEquals(e.get("type_name").asText(), t.type().name(), where);
            }
            assertEquals(e.get("offset_in_data_section").asLong(), t.offset(), where);
            assertEquals(e.get("nbytes").asLong(), t.byteSize(), where);
            if (e.has("abs_begin")) {
                assertEquals(e.get("abs_begin").asLong(), f.dataStart() + t.offset(), where);
            }
        }
    }

    /** Compares one decoded value with its JSON form: exact integers (unsigned-aware), float32 bits. */
    static void assertValue(GgufValueType type, JsonNode expected, Object actual, String where) {
        switch (type) {
            case UINT8 -> assertEquals(expected.asLong(), Byte.toUnsignedLong((Byte) actual), where);
            case INT8 -> assertEquals(expected.asLong(), (long) (Byte) actual, where);
            case UINT16 -> assertEquals(expected.asLong(), Short.toUnsignedLong((Short) actual), where);
            case INT16 -> assertEquals(expected.asLong(), (long) (Short) actual, where);
            case UINT32 -> assertEquals(expected.asLong(), Integer.toUnsignedLong((Integer) actual), where);
            case INT32 -> assertEquals(expected.asLong(), (long) (Integer) actual, where);
            case UINT64 -> assertEquals(expected.bigIntegerValue().toString(), Long.toUnsignedString((Long) actual), where);
            case INT64 -> assertEquals(expected.bigIntegerValue().toString(), Long.toString((Long) actual), where);
            case FLOAT32 -> assertEquals(Float.floatToIntBits((float) expected.asDouble()),
                    Float.floatToIntBits((Float) actual), where);
            case FLOAT64 -> assertEquals(Double.doubleToLongBits(expected.asDouble()),
                    Double.doubleToLongBits((Double) actual), where);
            case BOOL -> {
                assertTrue(expected.isBoolean(), where);
                assertEquals(expected.asBoolean(), actual, where);
            }
            case STRING -> assertEquals(expected.asText(), actual, where);
            case ARRAY -> fail("nested array in " + where);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sampler.gguf", "tiny-llama.gguf"})
    void reencodingEachKvGivesItsRawBytes(String name) {
        byte[] b = bytes(name);
        GgufFile f = read(b);
        long at = 24;
        for (GgufKv kv : f.kvs()) {
            assertEquals(at, kv.rawOffset(), kv.key());
            byte[] raw = Arrays.copyOfRange(b, (int) kv.rawOffset(), (int) (kv.rawOffset() + kv.rawLength()));
            assertArrayEquals(raw, GgufWriter.encodeKv(kv.key(), kv.type(), kv.value()), kv.key());
            at += kv.rawLength();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sampler.gguf", "tiny-llama.gguf"})
    void reencodingTheWholeHeaderGivesTheFileBytes(String name) {
        byte[] b = bytes(name);
        GgufFile f = read(b);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(GgufWriter.preamble(f.version(), f.tensors().size(), f.kvs().size()));
        for (GgufKv kv : f.kvs()) {
            out.writeBytes(GgufWriter.encodeKv(kv.key(), kv.type(), kv.value()));
        }
        for (GgufTensorInfo t : f.tensors()) {
            byte[] info = GgufWriter.encodeTensorInfo(t.name(), t.ne(), t.type(), t.offset());
            int at = out.size();
            assertArrayEquals(Arrays.copyOfRange(b, at, at + info.length), info, t.name());
            out.writeBytes(info);
        }
        int end = out.size();
        assertEquals(GgufWriter.align(end, f.alignment()), f.dataStart());
        out.writeBytes(new byte[(int) (f.dataStart() - end)]);
        assertArrayEquals(Arrays.copyOf(b, (int) f.dataStart()), out.toByteArray());
    }

    @ParameterizedTest
    @ValueSource(strings = {"sampler.gguf", "tiny-llama.gguf"})
    void tensorOffsetsFollowTheSequentialRule(String name) {
        byte[] b = bytes(name);
        GgufFile f = read(b);
        List<Long> sizes = new ArrayList<>();
        f.tensors().forEach(t -> sizes.add(t.byteSize()));
        long[] offsets = GgufWriter.tensorOffsets(sizes, f.alignment());
        assertArrayEquals(f.tensors().stream().mapToLong(GgufTensorInfo::offset).toArray(), offsets);
        GgufTensorInfo last = f.tensors().getLast();
        // both vectors pad the last tensor too, like ggml's writer
        assertEquals(b.length, f.dataStart() + GgufWriter.align(last.offset() + last.byteSize(), f.alignment()));
    }
}
