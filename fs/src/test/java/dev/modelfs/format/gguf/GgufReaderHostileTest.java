package dev.modelfs.format.gguf;

import dev.modelfs.format.FormatException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import static dev.modelfs.format.gguf.GgufBytes.concat;
import static dev.modelfs.format.gguf.GgufBytes.str;
import static dev.modelfs.format.gguf.GgufBytes.u32;
import static dev.modelfs.format.gguf.GgufBytes.u64;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Malformed and hostile GGUF inputs: always a one-line FormatException, never another exception or OOM. */
class GgufReaderHostileTest {

    private static FormatException rejects(byte[] b) {
        FormatException e = assertThrows(FormatException.class, () -> GgufReader.read(MemorySegment.ofArray(b)));
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        return e;
    }

    private static FormatException rejects(GgufBytes g) {
        return rejects(g.build());
    }

    private static GgufFile read(GgufBytes g) {
        return GgufReader.read(g.segment());
    }

    private static byte[] kvRaw(String key, int typeId, byte[] value) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        return concat(str(k.length, k), u32(typeId), value);
    }

    /**
     * Every prefix of the vector that cuts into the header or into tensor data is rejected. Prefixes
     * that keep all tensor bytes and only drop the trailing padding after the last tensor are valid
     * GGUF (Ollama's writer does not pad the last tensor, §6.1) and must read identically.
     */
    @ParameterizedTest
    @ValueSource(strings = {"sampler.gguf", "tiny-llama.gguf"})
    void everyTruncation(String name) {
        byte[] b = GgufVectorsTest.bytes(name);
        GgufFile full = GgufVectorsTest.read(b);
        GgufTensorInfo last = full.tensors().getLast();
        long needed = full.dataStart() + last.offset() + last.byteSize();
        assertTrue(needed < b.length, "vector has trailing padding");
        for (int len = 0; len < b.length; len++) {
            byte[] prefix = Arrays.copyOf(b, len);
            if (len < needed) {
                rejects(prefix);
            } else {
                GgufFile f = GgufReader.read(MemorySegment.ofArray(prefix));
                assertEquals(full, f, "prefix " + len);
            }
        }
    }

    @Test
    void magicAndVersion() {
        byte[] ok = new GgufBytes().build();
        assertEquals(0, GgufReader.read(MemorySegment.ofArray(ok)).kvs().size());
        byte[] be = ok.clone();
        System.arraycopy("FUGG".getBytes(StandardCharsets.US_ASCII), 0, be, 0, 4);
        assertTrue(rejects(be).getMessage().contains("big-endian"));
        // "GGUF" followed by a big-endian version 3, as gguf-py writes big-endian files
        assertTrue(rejects(new GgufBytes().version(Integer.reverseBytes(3))).getMessage().contains("big-endian"));
        assertTrue(rejects(new GgufBytes().version(1)).getMessage().contains("v1"));
        rejects(new GgufBytes().version(0));
        rejects(new GgufBytes().version(4));
        rejects(new GgufBytes().version(-1));
        byte[] bad = ok.clone();
        bad[0] = 'g';
        assertTrue(rejects(bad).getMessage().contains("magic"));
        assertEquals(2, read(new GgufBytes().version(2)).version());
    }

    @Test
    void absurdCounts() {
        for (long n : List.of(-1L, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 40, GgufReader.MAX_TENSORS + 1, 1L)) {
            rejects(new GgufBytes().counts(n, 0));
            rejects(new GgufBytes().counts(0, n));
        }
        // plausible counts, but the file is too small for that many entries
        rejects(new GgufBytes().kv("a", GgufValueType.UINT8, (byte) 1).counts(0, 2));
    }

    @Test
    void hugeStringLengths() {
        for (long len : List.of(-1L, Long.MAX_VALUE, 1L << 40, GgufReader.MAX_STRING_BYTES + 1, 4L)) {
            // key length
            rejects(new GgufBytes().rawKv(concat(u64(len), "abc".getBytes(StandardCharsets.US_ASCII))).counts(0, 1));
            // string value length
            rejects(new GgufBytes().rawKv(kvRaw("k", 8, str(len, new byte[]{'x'}))));
            // tensor name length
            rejects(new GgufBytes().rawInfo(concat(str(len, new byte[]{'t'}), u32(1), u64(1), u32(0), u64(0))));
        }
        rejects(new GgufBytes().rawKv(kvRaw("k", 8, str(2, new byte[]{'x'}))));
    }

    @Test
    void hugeArrayCounts() {
        for (long n : List.of(-1L, Long.MAX_VALUE, 1L << 40, GgufReader.MAX_ARRAY_ELEMENTS + 1, 5L)) {
            FormatException e = rejects(new GgufBytes().rawKv(kvRaw("a", 9, concat(u32(0), u64(n), new byte[4]))));
            assertTrue(e.getMessage().contains("\"a\""), e.getMessage());
        }
        // strings need at least 8 bytes each: 100 empty strings cannot fit in 100 bytes
        rejects(new GgufBytes().rawKv(kvRaw("a", 9, concat(u32(8), u64(100), new byte[100]))));
        // the same, well-formed
        GgufFile f = read(new GgufBytes().rawKv(kvRaw("a", 9, concat(u32(8), u64(100), new byte[800]))));
        assertEquals(100, ((GgufArray) f.kv("a").value()).size());
    }

    @Test
    void keysAndTypes() {
        rejects(new GgufBytes().kv("a", GgufValueType.UINT8, (byte) 1).kv("a", GgufValueType.UINT8, (byte) 1));
        rejects(new GgufBytes().rawKv(kvRaw("", 0, new byte[]{1})));
        rejects(new GgufBytes().rawKv(kvRaw("a", 13, new byte[]{1})));
        rejects(new GgufBytes().rawKv(kvRaw("a", -1, new byte[]{1})));
        // nested array
        rejects(new GgufBytes().rawKv(kvRaw("a", 9, concat(u32(9), u64(1), u32(0), u64(0)))));
        // key with invalid UTF-8
        rejects(new GgufBytes().rawKv(concat(str(2, new byte[]{(byte) 0xC3, 0x28}), u32(0), new byte[]{1})));
        FormatException dup = rejects(new GgufBytes().kv("x.y", GgufValueType.BOOL, true).kv("x.y", GgufValueType.BOOL, false));
        assertTrue(dup.getMessage().contains("duplicate") && dup.getMessage().contains("x.y"), dup.getMessage());
    }

    @Test
    void stringValuesAreDecodedLenientlyButKeepTheirRawBytes() {
        byte[] raw = kvRaw("s", 8, str(3, new byte[]{'a', (byte) 0xFF, 'b'}));
        byte[] file = new GgufBytes().rawKv(raw).build();
        GgufFile f = GgufReader.read(MemorySegment.ofArray(file));
        GgufKv kv = f.kv("s");
        assertEquals("a\uFFFDb", kv.value());
        assertEquals(24, kv.rawOffset());
        assertEquals(raw.length, kv.rawLength());
        // BOOL: any non-zero byte reads as true, like ggml
        assertEquals(true, read(new GgufBytes().rawKv(kvRaw("b", 7, new byte[]{2}))).kv("b").value());
    }

    @Test
    void alignment() {
        rejects(new GgufBytes().kv(GgufFile.ALIGNMENT_KEY, GgufValueType.UINT64, 64L));
        rejects(new GgufBytes().kv(GgufFile.ALIGNMENT_KEY, GgufValueType.INT32, 64));
        rejects(new GgufBytes().kv(GgufFile.ALIGNMENT_KEY, GgufValueType.UINT32, 0));
        rejects(new GgufBytes().kv(GgufFile.ALIGNMENT_KEY, GgufValueType.UINT32, 48));
        rejects(new GgufBytes().kv(GgufFile.ALIGNMENT_KEY, GgufValueType.UINT32, -1));
        GgufFile f = read(new GgufBytes().alignment(8).kv(GgufFile.ALIGNMENT_KEY, GgufValueType.UINT32, 8)
                .tensor("t", new long[]{3}, GgmlType.F32, 0).tensor("u", new long[]{1}, GgmlType.F32, 16).data(20));
        assertEquals(8, f.alignment());
        assertEquals(0, f.dataStart() % 8);
        // 2^31 is a power of two; the data start is then 2^31, beyond this small file, which is fine
        // only without tensors
        GgufFile huge = read(new GgufBytes().kv(GgufFile.ALIGNMENT_KEY, GgufValueType.UINT32, 1 << 31));
        assertEquals(1L << 31, huge.alignment());
        assertEquals(1L << 31, huge.dataStart());
        rejects(new GgufBytes().kv(GgufFile.ALIGNMENT_KEY, GgufValueType.UINT32, 1 << 31)
                .tensor("t", new long[]{0}, GgmlType.F32, 0));
        // offset not a multiple of the alignment
        rejects(new GgufBytes().tensor("t", new long[]{4}, GgmlType.F32, 16).data(64));
    }

    @Test
    void tensorInfos() {
        assertEquals(GgmlType.Q4_0, read(new GgufBytes().tensor("t", new long[]{32, 2}, GgmlType.Q4_0, 0).data(36))
                .tensor("t").type());
        rejects(new GgufBytes().tensor("t", new long[]{32, 2}, GgmlType.Q4_0, 0).data(35));      // data cut
        rejects(new GgufBytes().tensor("t", new long[]{4}, GgmlType.F32, 0).tensor("t", new long[]{4}, GgmlType.F32, 32)
                .data(48));
        byte[] name = str(1, new byte[]{'t'});
        // n_dims 5 and 2^32-1
        rejects(new GgufBytes().rawInfo(concat(name, u32(5), u64(1), u64(1), u64(1), u64(1), u64(1), u32(0), u64(0)))
                .data(64));
        rejects(new GgufBytes().rawInfo(concat(name, u32(-1), u64(1), u32(0), u64(0))).data(64));
        // removed / unknown / negative type ids
        for (int id : new int[]{4, 5, 31, 36, 43, 1000, -1}) {
            rejects(new GgufBytes().rawInfo(concat(name, u32(1), u64(32), u32(id), u64(0))).data(4096));
        }
        // ne[0] not a multiple of the block size
        rejects(new GgufBytes().rawInfo(concat(name, u32(1), u64(16), u32(2), u64(0))).data(64));
        // dimension >= 2^63, element-count overflow, size overflow
        rejects(new GgufBytes().rawInfo(concat(name, u32(1), u64(-1), u32(0), u64(0))).data(64));
        rejects(new GgufBytes().rawInfo(concat(name, u32(2), u64(1L << 32), u64(1L << 32), u32(24), u64(0))).data(64));
        rejects(new GgufBytes().rawInfo(concat(name, u32(1), u64(1L << 62), u32(0), u64(0))).data(64));
        // offset past the end, and offset + size overflowing
        rejects(new GgufBytes().rawInfo(concat(name, u32(1), u64(1), u32(0), u64(1L << 40))).data(64));
        rejects(new GgufBytes().rawInfo(concat(name, u32(1), u64(1), u32(0), u64(Long.MAX_VALUE & -32))).data(64));
        rejects(new GgufBytes().rawInfo(concat(name, u32(1), u64(1), u32(0), u64(-32))).data(64));
        // tensor name with invalid UTF-8
        rejects(new GgufBytes().rawInfo(concat(str(1, new byte[]{(byte) 0x80}), u32(1), u64(1), u32(0), u64(0))).data(64));
        // scalar tensor (n_dims 0) and empty tensor are fine
        GgufFile f = read(new GgufBytes().rawInfo(concat(name, u32(0), u32(0), u64(0)))
                .tensor("e", new long[]{0, 3}, GgmlType.Q4_K, 32).data(32));
        assertEquals(1, f.tensor("t").elements());
        assertEquals(4, f.tensor("t").byteSize());
        assertEquals(0, f.tensor("e").byteSize());
    }

    @Test
    void zeroTensorsMayEndBeforeTheAlignedDataStart() {
        byte[] b = new GgufBytes().kv("general.architecture", GgufValueType.STRING, "x").build();
        GgufFile f = GgufReader.read(MemorySegment.ofArray(b));
        assertTrue(f.dataStart() >= b.length && f.dataStart() % 32 == 0);
    }

    @Test
    void multiGigabyteOffsetsNeedNoData() {
        // the reader only checks bounds; a 5 GiB tensor in a small file is rejected without reading
        long ne = 5L << 30;
        FormatException e = rejects(new GgufBytes().tensor("big", new long[]{ne}, GgmlType.I8, 0).data(64));
        assertTrue(e.getMessage().contains("past the end"), e.getMessage());
    }

    @Test
    void everyMessageIsOneLineAndNamesTheProblem() {
        FormatException e = rejects(new GgufBytes().rawKv(kvRaw("bad\nkey", 13, new byte[]{1})));
        assertTrue(e.getMessage().contains("bad\\u000akey"), e.getMessage());
        assertTrue(e.getMessage().contains("13"), e.getMessage());
    }

    @Test
    void readerHandlesBigEndianValueOfAllOnes() {
        ByteBuffer b = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(GgufReader.MAGIC).putInt(3).putLong(0).putLong(0);
        assertEquals(0, GgufReader.read(MemorySegment.ofArray(b.array())).tensors().size());
    }
}
