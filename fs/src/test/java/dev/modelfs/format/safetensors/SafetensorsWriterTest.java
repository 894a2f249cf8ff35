package dev.modelfs.format.safetensors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.FormatException;
import dev.modelfs.format.safetensors.SafetensorsWriter.Layout;
import dev.modelfs.format.safetensors.SafetensorsWriter.Placed;
import dev.modelfs.format.safetensors.SafetensorsWriter.Spec;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link SafetensorsWriter} against §8.3 and the reference byte images. */
class SafetensorsWriterTest {

    private static byte[] vectorPrefix(String caseName, int len) {
        JsonNode c = SafetensorsVectorsTest.cases().stream()
                .filter(x -> x.get("name").asText().equals(caseName)).findFirst().orElseThrow();
        return Arrays.copyOf(HexFormat.of().parseHex(c.get("hex").asText()), len);
    }

    private static String json(Layout l) {
        return new String(l.header(), 8, l.header().length - 8, StandardCharsets.UTF_8);
    }

    /** The layout's file with zero-filled data, parsed back. */
    static SafetensorsHeader reparse(Layout l) {
        byte[] file = Arrays.copyOf(l.header(), Math.toIntExact(l.fileSize()));
        return SafetensorsParser.parse(MemorySegment.ofArray(file));
    }

    /** §8.2/§8.3 invariants of any layout. */
    static void checkInvariants(Layout l) {
        long n = ByteBuffer.wrap(l.header()).order(ByteOrder.LITTLE_ENDIAN).getLong();
        assertEquals(l.header().length - 8, n);
        assertEquals(0, n % 8);
        String j = json(l);
        String trimmed = j.stripTrailing();
        assertTrue(trimmed.endsWith("}"));
        assertTrue(j.substring(trimmed.length()).chars().allMatch(ch -> ch == ' '), "padding is spaces");
        assertTrue(j.length() - trimmed.length() < 8, "padding < 8");
        long at = 0;
        for (Placed p : l.tensors()) {
            assertEquals(at, p.begin());
            at = p.end();
        }
        assertEquals(l.header().length + at, l.fileSize());
        for (int i = 1; i < l.tensors().size(); i++) {
            Spec a = l.tensors().get(i - 1).spec();
            Spec b = l.tensors().get(i).spec();
            int ra = writeRank(a.dtype());
            int rb = writeRank(b.dtype());
            assertTrue(ra < rb || ra == rb && Names.compareUtf8(a.name(), b.name()) < 0, a + " before " + b);
        }
    }

    static final List<Dtype> EXPECTED_ORDER = List.of(Dtype.U64, Dtype.I64, Dtype.F64, Dtype.C64, Dtype.F32,
            Dtype.U32, Dtype.I32, Dtype.BF16, Dtype.F16, Dtype.U16, Dtype.I16, Dtype.F8_E5M2FNUZ, Dtype.F8_E4M3FNUZ,
            Dtype.F8_E8M0, Dtype.F8_E4M3, Dtype.F8_E5M2, Dtype.I8, Dtype.U8, Dtype.F6_E3M2, Dtype.F6_E2M3,
            Dtype.F4, Dtype.BOOL);

    static int writeRank(Dtype d) {
        return EXPECTED_ORDER.indexOf(d);
    }

    @Test
    void referenceByteImages() {
        assertArrayEquals(vectorPrefix("reference_empty", 16), SafetensorsWriter.layout(List.of(), null).header());
        Layout l = SafetensorsWriter.layout(List.of(new Spec("attn0", Dtype.F32, new long[]{1, 1, 2, 3})), null);
        assertArrayEquals(vectorPrefix("reference_forced_alignment", 80), l.header());
        assertEquals(104, l.fileSize());
        Layout go = SafetensorsWriter.layout(List.of(new Spec("model.norm.weight", Dtype.BF16, new long[]{4})), null);
        assertArrayEquals(vectorPrefix("ollama_go_single_tensor", 80), go.header());
    }

    @Test
    void dtypeDescendingThenName() {
        List<Spec> specs = new ArrayList<>();
        for (Dtype d : Dtype.values()) {
            specs.add(new Spec("t" + d.name(), d, new long[]{8}));
        }
        Collections.shuffle(specs, new Random(7));
        Layout l = SafetensorsWriter.layout(specs, null);
        assertEquals(EXPECTED_ORDER, l.tensors().stream().map(p -> p.spec().dtype()).toList());
        checkInvariants(l);

        Layout byName = SafetensorsWriter.layout(List.of(
                new Spec("b", Dtype.F16, new long[]{1}), new Spec("\uD83D\uDE00", Dtype.F16, new long[]{1}),
                new Spec("B", Dtype.F16, new long[]{1}), new Spec("\uFFFD", Dtype.F16, new long[]{1}),
                new Spec("a", Dtype.F32, new long[]{1})), null);
        // bytewise UTF-8: U+FFFD (EF BF BD) sorts before U+1F600 (F0 9F 98 80), unlike String.compareTo
        assertEquals(List.of("a", "B", "b", "\uFFFD", "\uD83D\uDE00"),
                byName.tensors().stream().map(p -> p.spec().name()).toList());
        checkInvariants(byName);
    }

    @Test
    void metadataComesFirstSorted() {
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put("z", "1");
        meta.put("a", "<&>");
        Layout l = SafetensorsWriter.layout(List.of(new Spec("w", Dtype.U8, new long[]{3})), meta);
        assertEquals("{\"__metadata__\":{\"a\":\"<&>\",\"z\":\"1\"},"
                + "\"w\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]}}", json(l).stripTrailing());
        checkInvariants(l);
        assertEquals(Map.of("a", "<&>", "z", "1"), reparse(l).metadata());
        assertEquals("{\"__metadata__\":{}}", json(SafetensorsWriter.layout(List.of(), Map.of())).stripTrailing());
        // the output does not depend on the map's iteration order
        Map<String, String> reversed = new LinkedHashMap<>();
        reversed.put("a", "<&>");
        reversed.put("z", "1");
        assertEquals(l, SafetensorsWriter.layout(List.of(new Spec("w", Dtype.U8, new long[]{3})), reversed));
    }

    @Test
    void escaping() {
        String name = "q\"b\\s\n\t\u0001\u007f\u00e9\u2581/</";
        Layout l = SafetensorsWriter.layout(List.of(new Spec(name, Dtype.BOOL, new long[]{})), null);
        assertTrue(json(l).startsWith("{\"q\\\"b\\\\s\\n\\t\\u0001\u007f\u00e9\u2581/</\":"), json(l));
        assertEquals(name, reparse(l).tensors().getFirst().name());
    }

    @Test
    void rejectsBadInput() {
        Spec a = new Spec("a", Dtype.U8, new long[]{1});
        assertThrows(FormatException.class, () -> SafetensorsWriter.layout(List.of(a, new Spec("a", Dtype.F32, new long[]{})), null));
        assertThrows(FormatException.class, () -> new Spec("__metadata__", Dtype.U8, new long[]{1}));
        assertThrows(FormatException.class, () -> new Spec("bad\uD800", Dtype.U8, new long[]{1}));
        assertThrows(FormatException.class, () -> new Spec("a", Dtype.U8, new long[]{-1}));
        assertThrows(FormatException.class, () -> new Spec("a", Dtype.F4, new long[]{3}));
        assertThrows(FormatException.class, () -> new Spec("a", null, new long[]{3}));
        assertThrows(FormatException.class, () -> new Spec("a", Dtype.F32, new long[]{1L << 62}));
        Map<String, String> nullValue = new HashMap<>();
        nullValue.put("k", null);
        assertThrows(FormatException.class, () -> SafetensorsWriter.layout(List.of(a), nullValue));
        assertThrows(FormatException.class, () -> SafetensorsWriter.layout(List.of(a), Map.of("k", "\uDC00")));
        long half = Long.MAX_VALUE / 2 + 1;
        assertThrows(FormatException.class, () -> SafetensorsWriter.layout(List.of(
                new Spec("x", Dtype.U8, new long[]{half}), new Spec("y", Dtype.U8, new long[]{half})), null));
    }

    @Test
    void rejectsHeaderOverLimit() {
        // 17M control characters escape to 6 bytes each: > 100_000_000 bytes of JSON
        String v = "\u0001".repeat(17_000_000);
        FormatException e = assertThrows(FormatException.class,
                () -> SafetensorsWriter.layout(List.of(), Map.of("k", v)));
        assertTrue(e.getMessage().contains("100000000"), e.getMessage());
    }

    @Test
    void zeroSizeAndHugeTensors() {
        Layout l = SafetensorsWriter.layout(List.of(new Spec("e", Dtype.F32, new long[]{0, 5}),
                new Spec("big", Dtype.U64, new long[]{1L << 40}), new Spec("s", Dtype.F32, new long[]{})), null);
        assertEquals(List.of("big", "e", "s"), l.tensors().stream().map(p -> p.spec().name()).toList());
        assertEquals(8L << 40, l.tensors().get(1).begin());
        assertEquals(8L << 40, l.tensors().get(1).end());
        assertEquals(l.header().length + (8L << 40) + 4, l.fileSize());
        checkInvariants(l);
    }

    @Test
    void specIsImmutable() {
        long[] shape = {2, 3};
        Spec s = new Spec("a", Dtype.F16, shape);
        shape[0] = 7;
        s.shape()[1] = 9;
        assertArrayEquals(new long[]{2, 3}, s.shape());
        assertEquals(12, s.byteSize());
        assertEquals(new Spec("a", Dtype.F16, new long[]{2, 3}), s);
    }
}
