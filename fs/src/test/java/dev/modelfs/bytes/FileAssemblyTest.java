package dev.modelfs.bytes;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.modelfs.cache.ChunkCache;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufReader;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.format.gguf.GgufWriter;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.format.safetensors.SafetensorsWriter;
import dev.modelfs.read.OpenedSource;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The two assembled formats, read back byte for byte. */
class FileAssemblyTest {
    private static byte[] bytes(ByteSource src) throws IOException {
        try (OpenedSource o = OpenedSource.open(src, ref -> {
            throw new IOException("no blobs here");
        }, new ChunkCache(0))) {
            byte[] out = new byte[Math.toIntExact(src.size())];
            o.read(0, MemorySegment.ofArray(out), 0, out.length);
            return out;
        }
    }

    private static byte[] filled(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed + 31 * i);
        }
        return b;
    }

    @Test
    void ggufTensorsSitAtAlignedOffsetsAfterTheHeaderAndTheFileIsPadded() throws IOException {
        byte[] head = GgufWriter.preamble(3, 2, 1);
        byte[] kv = GgufWriter.encodeKv("general.architecture", GgufValueType.STRING, "llama");
        byte[] a = filled(4 * 6, 1);                       // F32 [3, 2]
        byte[] q = filled(34 * 2, 2);                      // Q8_0 [64]: two blocks
        byte[] file = bytes(FileAssembly.gguf(List.of(new Segment.Literal(head), new Segment.Literal(kv)), List.of(
                new FileAssembly.GgufTensor("a", new long[] {3, 2}, GgmlType.F32, new Segment.Literal(a)),
                new FileAssembly.GgufTensor("q", new long[] {64}, GgmlType.Q8_0, new Segment.Literal(q))), 32));
        GgufFile g = GgufReader.read(MemorySegment.ofArray(file));
        assertEquals("llama", g.kv("general.architecture").value());
        assertEquals(0, g.dataStart() % 32);
        GgufTensorInfo ta = g.tensor("a");
        GgufTensorInfo tq = g.tensor("q");
        assertEquals(0, ta.offset());
        assertEquals(32, tq.offset(), "24 bytes of a, padded to 32");
        assertArrayEquals(a, Arrays.copyOfRange(file, (int) g.dataStart(), (int) g.dataStart() + a.length));
        assertArrayEquals(q, Arrays.copyOfRange(file, (int) (g.dataStart() + 32), (int) (g.dataStart() + 32 + q.length)));
        assertEquals(g.dataStart() + 32 + 96, file.length, "68 bytes of q padded to 96");
    }

    @Test
    void aTensorWhoseBytesDoNotMatchItsTypeAndShapeIsRefused() {
        assertThrows(IllegalStateException.class, () -> FileAssembly.gguf(List.of(new Segment.Literal(GgufWriter.preamble(3, 1, 0))),
                List.of(new FileAssembly.GgufTensor("a", new long[] {4}, GgmlType.F16, new Segment.Literal(new byte[6]))), 32));
    }

    @Test
    void aGgufWithoutTensorsEndsAfterItsHeader() throws IOException {
        byte[] head = GgufWriter.preamble(3, 0, 0);
        assertArrayEquals(head, bytes(FileAssembly.gguf(List.of(new Segment.Literal(head)), List.of(), 32)));
    }

    @Test
    void safetensorsDataFollowsTheHeaderInHeaderOrder() throws IOException {
        byte[] x = filled(8, 3);
        byte[] y = filled(4, 4);
        byte[] file = bytes(FileAssembly.safetensors(List.of(new SafetensorsWriter.Spec("y", Dtype.F16, new long[] {2}),
                new SafetensorsWriter.Spec("x", Dtype.F32, new long[] {2})), Map.of("format", "pt"),
                Map.of("x", new Segment.Literal(x), "y", new Segment.Literal(y))));
        long n = ByteBuffer.wrap(file, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        String header = new String(file, 8, (int) n, StandardCharsets.UTF_8);
        int start = 8 + (int) n;
        int xAt = header.indexOf("\"x\"");
        int yAt = header.indexOf("\"y\"");
        byte[] data = Arrays.copyOfRange(file, start, file.length);
        assertEquals(12, data.length);
        boolean xFirst = header.substring(xAt).contains("\"data_offsets\":[0,8]");
        assertArrayEquals(xFirst ? concat(x, y) : concat(y, x), data, header + " " + yAt);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
