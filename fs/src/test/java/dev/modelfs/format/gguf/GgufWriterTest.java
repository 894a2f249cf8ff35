package dev.modelfs.format.gguf;

import dev.modelfs.format.FormatException;
import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Byte-level encoding of {@link GgufWriter}. */
class GgufWriterTest {

    private static byte[] hex(String h) {
        return HexFormat.of().parseHex(h.replace(" ", ""));
    }

    @Test
    void preamble() {
        assertArrayEquals(hex("47475546 03000000 0200000000000000 0500000000000000"), GgufWriter.preamble(3, 2, 5));
        assertArrayEquals(hex("47475546 02000000 0000000000000000 0000000000000000"), GgufWriter.preamble(2, 0, 0));
        assertThrows(FormatException.class, () -> GgufWriter.preamble(1, 0, 0));
        assertThrows(FormatException.class, () -> GgufWriter.preamble(3, -1, 0));
    }

    @Test
    void scalarKvs() {
        String k = "0100000000000000 6b"; // key "k"
        assertArrayEquals(hex(k + "00000000 c8"), GgufWriter.encodeKv("k", GgufValueType.UINT8, (byte) 200));
        assertArrayEquals(hex(k + "03000000 d08a"), GgufWriter.encodeKv("k", GgufValueType.INT16, (short) -30000));
        assertArrayEquals(hex(k + "04000000 0028 6bee"), GgufWriter.encodeKv("k", GgufValueType.UINT32, (int) 4_000_000_000L));
        assertArrayEquals(hex(k + "06000000 cdcccc3d"), GgufWriter.encodeKv("k", GgufValueType.FLOAT32, 0.1f));
        assertArrayEquals(hex(k + "07000000 01"), GgufWriter.encodeKv("k", GgufValueType.BOOL, true));
        assertArrayEquals(hex(k + "0a000000 0500000000000080"),
                GgufWriter.encodeKv("k", GgufValueType.UINT64, Long.parseUnsignedLong("9223372036854775813")));
        assertArrayEquals(hex(k + "0c000000 9a9999999999b93f"), GgufWriter.encodeKv("k", GgufValueType.FLOAT64, 0.1));
        assertArrayEquals(hex(k + "08000000 0200000000000000 c3a9"), GgufWriter.encodeKv("k", GgufValueType.STRING, "\u00e9"));
        // NaN payloads survive
        float nan = Float.intBitsToFloat(0x7fc00001);
        assertArrayEquals(hex(k + "06000000 0100c07f"), GgufWriter.encodeKv("k", GgufValueType.FLOAT32, nan));
    }

    @Test
    void arrayKvs() {
        String k = "0100000000000000 6b 09000000";
        assertArrayEquals(hex(k + "08000000 0200000000000000 0100000000000000 61 0000000000000000"),
                GgufWriter.encodeKv("k", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, List.of("a", ""))));
        assertArrayEquals(hex(k + "04000000 0000000000000000"),
                GgufWriter.encodeKv("k", GgufValueType.ARRAY, new GgufArray(GgufValueType.UINT32, List.of())));
    }

    @Test
    void rejectsBadKvs() {
        assertThrows(FormatException.class, () -> GgufWriter.encodeKv("", GgufValueType.UINT8, (byte) 1));
        assertThrows(FormatException.class, () -> GgufWriter.encodeKv("k", GgufValueType.UINT8, 1));
        assertThrows(FormatException.class, () -> GgufWriter.encodeKv("k", GgufValueType.ARRAY, List.of(1)));
        assertThrows(FormatException.class, () -> GgufWriter.encodeKv("k", GgufValueType.STRING, "\uD800"));
        assertThrows(FormatException.class, () -> GgufWriter.encodeKv("\uDC00", GgufValueType.BOOL, true));
    }

    @Test
    void tensorInfos() {
        assertArrayEquals(hex("0100000000000000 74 02000000 2000000000000000 0200000000000000 02000000 4000000000000000"),
                GgufWriter.encodeTensorInfo("t", new long[]{32, 2}, GgmlType.Q4_0, 64));
        GgufWriter.encodeTensorInfo("x".repeat(63), new long[]{1}, GgmlType.F32, 0);
        assertThrows(FormatException.class, () -> GgufWriter.encodeTensorInfo("x".repeat(64), new long[]{1}, GgmlType.F32, 0));
        assertThrows(FormatException.class, () -> GgufWriter.encodeTensorInfo("t", new long[]{31}, GgmlType.Q4_0, 0));
        assertThrows(FormatException.class, () -> GgufWriter.encodeTensorInfo("t", new long[]{1, 1, 1, 1, 1}, GgmlType.F32, 0));
    }

    @Test
    void alignAndOffsets() {
        assertEquals(0, GgufWriter.align(0, 32));
        assertEquals(32, GgufWriter.align(1, 32));
        assertEquals(32, GgufWriter.align(32, 32));
        assertEquals(1L << 31, GgufWriter.align(5, 1L << 31));
        assertThrows(FormatException.class, () -> GgufWriter.align(1, 48));
        assertThrows(FormatException.class, () -> GgufWriter.align(1, 0));
        assertThrows(FormatException.class, () -> GgufWriter.align(-1, 32));
        assertThrows(FormatException.class, () -> GgufWriter.align(Long.MAX_VALUE, 32));
        assertArrayEquals(new long[]{0, 32, 32, 96}, GgufWriter.tensorOffsets(List.of(16L, 0L, 33L, 1L), 32));
        assertArrayEquals(new long[]{}, GgufWriter.tensorOffsets(List.of(), 32));
        assertThrows(FormatException.class, () -> GgufWriter.tensorOffsets(List.of(-1L), 32));
        assertThrows(FormatException.class, () -> GgufWriter.tensorOffsets(List.of(Long.MAX_VALUE - 64, 64L, 64L), 32));
    }
}
