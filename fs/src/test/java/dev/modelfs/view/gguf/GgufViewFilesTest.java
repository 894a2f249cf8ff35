package dev.modelfs.view.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.cache.BlobMappings;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.convert.OutputType;
import dev.modelfs.format.Vectors;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufReader;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufWriter;
import dev.modelfs.format.safetensors.SafetensorsHeader;
import dev.modelfs.format.safetensors.SafetensorsParser;
import dev.modelfs.format.safetensors.TensorEntry;
import dev.modelfs.read.OpenedSource;
import dev.modelfs.store.Digest;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The GGUF model's converted files, synthesized over the {@code tiny-llama.gguf} test vector:
 * headers obey the reference readers' rules (§8.2 for safetensors, ggml's sequential offsets for
 * GGUF), dequantized data matches the vector's independent SHA-256 of each tensor's f32 values, and
 * reads split at any boundary equal one whole read.
 */
class GgufViewFilesTest {
    final Path file = Vectors.file("tiny-llama.gguf");
    final BlobRef blob;
    final GgufFile source;
    final JsonNode expected;

    GgufViewFilesTest() throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        blob = new BlobRef(new Digest(HexFormat.of().formatHex(sha256(bytes))), bytes.length);
        source = GgufReader.read(MemorySegment.ofArray(bytes));
        expected = new ObjectMapper().readTree(Vectors.file("tiny-llama.gguf.json").toFile());
    }

    static byte[] sha256(byte[] b) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(b);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    byte[] readAll(ByteSource src) throws IOException {
        BlobMappings m = new BlobMappings(2);
        try (OpenedSource o = OpenedSource.open(src, ref -> m.acquire(ref.digest().hex(), file, ref.expectedSize()), new ChunkCache(1 << 20))) {
            byte[] whole = new byte[Math.toIntExact(src.size())];
            assertEquals(whole.length, o.read(0, MemorySegment.ofArray(whole), 0, whole.length));
            // every segment boundary, +-1, with short and long reads, equals the whole read
            for (int i = 0; i < src.segmentCount(); i++) {
                long b = src.start(i);
                for (long start : new long[] {b - 1, b, b + 1}) {
                    if (start < 0 || start >= whole.length) {
                        continue;
                    }
                    for (int len : new int[] {1, 7, 4096}) {
                        byte[] part = new byte[len];
                        long n = o.read(start, MemorySegment.ofArray(part), 0, len);
                        assertEquals(Math.min(len, whole.length - start), n);
                        assertArrayEquals(java.util.Arrays.copyOfRange(whole, (int) start, (int) (start + n)),
                                java.util.Arrays.copyOf(part, (int) n), "range " + start + "+" + len);
                    }
                }
            }
            return whole;
        }
    }

    Map<String, JsonNode> expectedTensors() {
        Map<String, JsonNode> m = new TreeMap<>();
        expected.get("tensors").forEach(t -> m.put(t.get("name").asText(), t));
        return m;
    }

    @Test
    void fp32GgufIsValidForGgmlKeepsMetadataAndHoldsExactF32() throws IOException {
        byte[] out = readAll(GgufModelView.gguf(source, blob, OutputType.F32));
        GgufFile g = GgufReader.read(MemorySegment.ofArray(out));
        assertEquals(source.kvs().size(), g.kvs().size(), "general.file_type replaced in place");
        for (int i = 0; i < g.kvs().size(); i++) {
            GgufKv a = source.kvs().get(i), b = g.kvs().get(i);
            assertEquals(a.key(), b.key());
            if (!a.key().equals("general.file_type")) {
                assertEquals(String.valueOf(a.value()), String.valueOf(b.value()), a.key());
            } else {
                assertEquals(0, ((Number) b.value()).intValue());
            }
        }
        long expect = 0;
        Map<String, JsonNode> want = expectedTensors();
        for (GgufTensorInfo t : g.tensors()) {
            assertEquals(GgufWriter.align(expect, g.alignment()), t.offset(), "ggml requires sequential offsets: " + t.name());
            expect = t.offset() + t.byteSize();
            JsonNode w = want.get(t.name());
            assertArrayEquals(toLongs(w.get("ne")), t.ne());
            if (t.type().id() == 0) {
                byte[] data = java.util.Arrays.copyOfRange(out, (int) (g.dataStart() + t.offset()), (int) (g.dataStart() + t.offset() + t.byteSize()));
                String sha = HexFormat.of().formatHex(sha256(data));
                if (w.get("ggml_type").asInt() != 1 && w.get("ggml_type").asInt() != 30) {   // F16/BF16 stay as stored
                    assertEquals(w.get("dequant_f32_sha256").asText(), sha, "f32 of " + t.name());
                }
            }
        }
        assertEquals(GgufWriter.align(g.dataStart() + expect, g.alignment()), out.length, "padded after the last tensor");
    }

    static long[] toLongs(JsonNode arr) {
        long[] out = new long[arr.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = arr.get(i).asLong();
        }
        return out;
    }

    @Test
    void safetensorsFilesObeyTheReferenceRulesAndHoldExactF32() throws IOException {
        for (OutputType out : new OutputType[] {null, OutputType.F32, OutputType.F16, OutputType.BF16}) {
            byte[] bytes = readAll(GgufModelView.safetensors(source, blob, out, null));
            SafetensorsHeader h = SafetensorsParser.parse(MemorySegment.ofArray(bytes));   // §8.2, incl. exact coverage
            assertEquals(0, h.headerLength() % 8, "header padded to 8");
            assertEquals(Map.of("format", "pt"), h.metadata());
            for (TensorEntry e : h.tensors()) {
                assertEquals(0, (h.dataStart() + e.begin()) % (e.dtype().bits() / 8), "natural alignment of " + e.name());
            }
            if (out == OutputType.F32 || out == null) {
                Map<String, JsonNode> want = expectedTensors();
                for (TensorEntry e : h.tensors()) {
                    JsonNode w = want.get(e.name());
                    long[] ne = toLongs(w.get("ne"));
                    long[] shape = new long[ne.length];
                    for (int i = 0; i < ne.length; i++) {
                        shape[i] = ne[ne.length - 1 - i];
                    }
                    assertArrayEquals(shape, e.shape(), "shape = reversed ne");
                    if (e.dtype().name().equals("F32")) {
                        byte[] data = java.util.Arrays.copyOfRange(bytes, (int) (h.dataStart() + e.begin()), (int) (h.dataStart() + e.end()));
                        assertEquals(w.get("dequant_f32_sha256").asText(), HexFormat.of().formatHex(sha256(data)), e.name());
                    }
                }
            }
        }
    }
}
