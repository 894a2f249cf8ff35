package dev.modelfs.format.safetensors;

import dev.modelfs.format.FormatException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;

import static dev.modelfs.format.safetensors.StBytes.file;
import static dev.modelfs.format.safetensors.StBytes.parse;
import static dev.modelfs.format.safetensors.StBytes.seg;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Parser rules of docs/FORMATS.md §8.2 beyond the shared vectors, and hostile inputs. */
class SafetensorsParserTest {

    private static final String X = "{\"x\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8]}}";

    private static FormatException rejects(String header, long dataLen) {
        return assertThrows(FormatException.class, () -> parse(header, dataLen), header);
    }

    private static FormatException rejects(byte[] bytes) {
        return assertThrows(FormatException.class, () -> SafetensorsParser.parse(seg(bytes)));
    }

    @Test
    void minimalValidFile() {
        SafetensorsHeader h = parse(X, 8);
        assertEquals(X.length(), h.headerLength());
        assertEquals(8 + X.length(), h.dataStart());
        TensorEntry x = h.get("x");
        assertEquals(new TensorEntry("x", Dtype.BF16, new long[]{4}, 0, 8), x);
        assertEquals(4, x.numel());
        assertEquals(8, x.byteLength());
        assertNull(h.get("y"));
        assertNull(h.metadata());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 7})
    void shorterThanEightBytes(int len) {
        rejects(new byte[len]);
    }

    @Test
    void headerLengthLimits() {
        rejects(StBytes.withLength(100_000_001L, new byte[16]));
        rejects(StBytes.withLength(-1L, new byte[16]));               // 2^64-1 unsigned
        rejects(StBytes.withLength(Long.MIN_VALUE, new byte[16]));    // 2^63
        rejects(StBytes.withLength(Long.MAX_VALUE, new byte[16]));
        // within the limit but past the end of the file: must not allocate or read 100 MB
        FormatException e = rejects(StBytes.withLength(100_000_000L, "{}".getBytes(StandardCharsets.US_ASCII)));
        assertTrue(e.getMessage().contains("past end"), e.getMessage());
        rejects(StBytes.withLength(3, "{}".getBytes(StandardCharsets.US_ASCII)));
        rejects(StBytes.withLength(0, new byte[0]));                  // empty JSON text
    }

    @Test
    void offsetsBeyondFile() {
        String big = "{\"x\":{\"dtype\":\"U8\",\"shape\":[1099511627776],\"data_offsets\":[0,1099511627776]}}";
        assertTrue(rejects(big, 8).getMessage().contains("past end"));
        String huge = "{\"x\":{\"dtype\":\"U8\",\"shape\":[9223372036854775807],"
                + "\"data_offsets\":[0,9223372036854775807]}}";
        rejects(huge, 8);
        rejects("{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,18446744073709551615]}}", 1);
        rejects("{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1e3]}}", 1);
    }

    @Test
    void holesOverlapsAndCoverage() {
        String two = "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[%d,%d]},"
                + "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[%d,%d]}}";
        SafetensorsHeader ok = parse(two.formatted(2, 4, 0, 2), 4); // data order != key order is fine
        assertEquals(List.of("a", "b"), ok.tensors().stream().map(TensorEntry::name).toList());
        assertEquals(2, ok.get("a").begin());
        rejects(two.formatted(0, 2, 1, 3), 4);  // overlap
        rejects(two.formatted(0, 2, 0, 2), 4);  // same range
        rejects(two.formatted(0, 2, 3, 5), 5);  // hole
        rejects(two.formatted(1, 3, 3, 5), 5);  // does not start at 0
        rejects(two.formatted(0, 2, 2, 4), 5);  // trailing byte
        rejects(two.formatted(0, 2, 2, 4), 3);  // missing byte
        rejects("{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[3,2]}}", 0); // end < begin
    }

    @Test
    void emptyAndScalarTensors() {
        SafetensorsHeader h = parse("{\"e\":{\"dtype\":\"F32\",\"shape\":[3,0],\"data_offsets\":[4,4]},"
                + "\"s\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}", 4);
        assertEquals(0, h.get("e").numel());
        assertEquals(1, h.get("s").numel());
        assertEquals(0, h.get("s").rank());
        assertEquals(0, parse("{}", 0).tensors().size());
        rejects("{}", 1);
    }

    @Test
    void subByteDtypes() {
        parse("{\"x\":{\"dtype\":\"F6_E2M3\",\"shape\":[4],\"data_offsets\":[0,3]}}", 3);
        rejects("{\"x\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}", 2);    // 12 bits
        rejects("{\"x\":{\"dtype\":\"F6_E3M2\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2); // 12 bits
    }

    @Test
    void sizeOverflow() {
        FormatException e = rejects("{\"x\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],"
                + "\"data_offsets\":[0,0]}}", 0);
        assertTrue(e.getMessage().contains("overflow"), e.getMessage());
        rejects("{\"x\":{\"dtype\":\"F64\",\"shape\":[2305843009213693952],\"data_offsets\":[0,0]}}", 0);
    }

    @Test
    void whitespaceAroundHeader() {
        assertEquals(1, parse(X + "    ", 8).tensors().size());
        assertEquals(1, parse(" \t\r\n" + X + "\n\t ", 8).tensors().size());
        rejects(X + "\0\0\0", 8);                 // NUL padding is not JSON whitespace
        rejects(X + " x", 8);                     // trailing garbage
        rejects(X + "{}", 8);                     // two values
        rejects("\uFEFF" + X, 8);                 // BOM
        rejects("\u00a0" + X, 8);                 // non-JSON whitespace
    }

    @Test
    void invalidUtf8() {
        byte[] h = X.replace("\"x\"", "\"\u00e9\"").getBytes(StandardCharsets.UTF_8);
        // sanity: the valid form parses
        assertEquals("\u00e9", SafetensorsParser.parse(seg(file(h, 8))).tensors().getFirst().name());
        for (byte[] bad : List.of(new byte[]{(byte) 0xC3, 0x28}, new byte[]{(byte) 0xC0, (byte) 0xA9},
                new byte[]{(byte) 0xED, (byte) 0xA0, (byte) 0x80}, new byte[]{(byte) 0xFF})) {
            byte[] copy = X.getBytes(StandardCharsets.UTF_8);
            byte[] withBad = new byte[copy.length + bad.length];
            int at = X.indexOf('x');
            System.arraycopy(copy, 0, withBad, 0, at);
            System.arraycopy(bad, 0, withBad, at, bad.length);
            System.arraycopy(copy, at, withBad, at + bad.length, copy.length - at);
            FormatException e = rejects(file(withBad, 8));
            assertTrue(e.getMessage().contains("UTF-8"), e.getMessage());
        }
    }

    @Test
    void jsonStructure() {
        rejects("[]", 0);
        rejects("\"x\"", 0);
        rejects("null", 0);
        rejects("{", 0);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8],}}", 8); // trailing comma
        rejects("{'x':{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8]}/**/}", 8);
        rejects("{\"x\":[]}", 0);
        rejects("{\"x\":null}", 0);
        rejects("{\"x\":{\"shape\":[4],\"data_offsets\":[0,8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"data_offsets\":[0,8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"shape\":[4]}}", 8);
        rejects("{\"x\":{\"dtype\":null,\"shape\":[4],\"data_offsets\":[0,8]}}", 8);
        rejects("{\"x\":{\"dtype\":16,\"shape\":[4],\"data_offsets\":[0,8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"bf16\",\"shape\":[4],\"data_offsets\":[0,8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"shape\":4,\"data_offsets\":[0,8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"shape\":[4.0],\"data_offsets\":[0,8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"shape\":[-4],\"data_offsets\":[0,8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"shape\":[\"4\"],\"data_offsets\":[0,8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"shape\":[[4]],\"data_offsets\":[0,8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"shape\":[04],\"data_offsets\":[0,8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8,8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,-8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8]}}", 8);
        rejects("{\"x\":{\"dtype\":\"BF16\",\"shape\":[4],\"shape\":[4],\"data_offsets\":[0,8]}}", 8);
    }

    @Test
    void unknownFieldsAreIgnored() {
        SafetensorsHeader h = parse("{\"x\":{\"extra\":{\"a\":[1,{\"b\":null}]},\"dtype\":\"BF16\",\"shape\":[4],"
                + "\"data_offsets\":[0,8],\"more\":\"y\"}}", 8);
        assertArrayEquals(new long[]{4}, h.get("x").shape());
    }

    @Test
    void rankIsCapped() {
        String ones = "1,".repeat(HeaderJsonReader.MAX_RANK);
        String shape = ones.substring(0, ones.length() - 1);
        parse("{\"x\":{\"dtype\":\"U8\",\"shape\":[" + shape + "],\"data_offsets\":[0,1]}}", 1);
        rejects("{\"x\":{\"dtype\":\"U8\",\"shape\":[" + shape + ",1],\"data_offsets\":[0,1]}}", 1);
    }

    @Test
    void deepNestingInIgnoredFieldIsRejectedNotStackOverflow() {
        String deep = "[".repeat(100_000);
        rejects("{\"x\":{\"z\":" + deep + "}}", 0);
    }

    @Test
    void metadata() {
        SafetensorsHeader h = parse("{\"__metadata__\":{\"format\":\"pt\",\"a\":\"<\\u003c\"}," + X.substring(1), 8);
        assertEquals(Map.of("format", "pt", "a", "<<"), h.metadata());
        assertEquals(List.of("format", "a"), List.copyOf(h.metadata().keySet()));
        assertThrows(UnsupportedOperationException.class, () -> h.metadata().put("k", "v"));
        assertNull(parse("{\"__metadata__\":null," + X.substring(1), 8).metadata());
        assertEquals(Map.of(), parse("{\"__metadata__\":{}}", 0).metadata());
        rejects("{\"__metadata__\":[]}", 0);
        rejects("{\"__metadata__\":\"x\"}", 0);
        rejects("{\"__metadata__\":{\"a\":null}}", 0);
        rejects("{\"__metadata__\":{\"a\":{}}}", 0);
        rejects("{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}", 0);
        rejects("{\"__metadata__\":{},\"__metadata__\":{}}", 0);
        rejects("{\"__metadata__\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}", 0);
    }

    @Test
    void duplicateTensorNames() {
        rejects("{\"x\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]},"
                + "\"x\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}", 0);
    }

    @Test
    void headerIsImmutable() {
        SafetensorsHeader h = parse(X, 8);
        assertThrows(UnsupportedOperationException.class, () -> h.tensors().clear());
        h.get("x").shape()[0] = 99;
        assertEquals(4, h.get("x").shape()[0]);
    }

    /** A sparse multi-GB file: offsets beyond 2^32 work and only the header is touched. */
    @Test
    void multiGigabyteMappedFile(@TempDir Path dir) throws IOException {
        long dataLen = 5L << 30;
        String header = "{\"big\":{\"dtype\":\"U8\",\"shape\":[" + dataLen + "],\"data_offsets\":[0," + dataLen + "]}}";
        byte[] head = file(header, 0);
        Path f = dir.resolve("big.safetensors");
        try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
            raf.write(head);
            raf.setLength(head.length + dataLen);
        }
        try (Arena arena = Arena.ofConfined(); FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            MemorySegment seg = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
            SafetensorsHeader h = SafetensorsParser.parse(seg);
            assertEquals(dataLen, h.get("big").byteLength());
            assertEquals(head.length + dataLen, h.dataStart() + h.get("big").end());
            assertThrows(FormatException.class, () -> SafetensorsParser.parse(seg.asSlice(0, seg.byteSize() - 1)));
        }
    }
}
