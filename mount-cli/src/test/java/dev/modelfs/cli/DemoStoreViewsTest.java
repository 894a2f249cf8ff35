package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.cache.BlobMappings;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufReader;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.read.OpenedSource;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.ModelDirectory;
import dev.modelfs.tree.Node;
import dev.modelfs.tree.StoreTree;
import dev.modelfs.view.StandardViews;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every view family over the demo store, without a mount: the files each adds to a model directory, and
 * converted bytes checked against formulas computed here from the stored blocks.
 */
class DemoStoreViewsTest {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @TempDir
    Path root;
    OllamaStore store;
    StoreTree tree;
    BlobMappings mappings;
    ChunkCache chunks;

    @BeforeEach
    void build() throws IOException {
        new DemoStore(root).write();
        store = new OllamaStore(root);
        tree = new StoreTree(store, new ModelDirectory(StandardViews.all()));
        tree.refresh();
        mappings = new BlobMappings(8);
        chunks = new ChunkCache(8 << 20);
    }

    @AfterEach
    void close() {
        chunks.close();
        mappings.close();
    }

    private DirNode model(String name) {
        return assertInstanceOf(DirNode.class, tree.root().child(name), name);
    }

    private byte[] read(DirNode dir, String path) throws IOException {
        Node n = dir;
        for (String part : path.split("/")) {
            n = ((DirNode) n).child(part);
        }
        FileNode f = assertInstanceOf(FileNode.class, n, path);
        try (OpenedSource o = OpenedSource.open(f.source(), BlobResolver.forStore(store, mappings), chunks)) {
            byte[] out = new byte[Math.toIntExact(o.size())];
            assertEquals(out.length, o.read(0, MemorySegment.ofArray(out), 0, out.length));
            return out;
        }
    }

    @Test
    void eachFamilyAddsItsFiles() {
        Set<String> gguf = model("demo-llama").children().keySet();
        for (String f : new String[] {"model.gguf", "model.fp32.gguf", "model.bf16.gguf", "config.json", "tokenizer.json",
                "model.safetensors", "fp16", "gguf", "ollama"}) {
            assertTrue(gguf.contains(f), "GGUF model view: " + f + " in " + gguf);
        }
        Set<String> st = model("demo-st:int4").children().keySet();
        for (String f : new String[] {"model.safetensors", "bf16", "model.gguf", "model.fp16.gguf"}) {
            assertTrue(st.contains(f), "safetensors and synthesized GGUF views: " + f + " in " + st);
        }
        for (String f : new String[] {"model.safetensors", "config.json", "tokenizer.json"}) {   // a complete variant folder
            assertInstanceOf(FileNode.class, ((DirNode) model("demo-st:int4").child("bf16")).child(f), "bf16/" + f);
            assertInstanceOf(FileNode.class, ((DirNode) model("demo-llama").child("fp16")).child(f), "fp16/" + f);
        }
    }

    /** The fp32 GGUF variant holds every Q8_0 tensor as d * q, computed here from the original blocks. */
    @Test
    void theFp32GgufDequantizesQ8_0ByItsFormula() throws IOException {
        DirNode dir = model("demo-llama");
        MemorySegment orig = MemorySegment.ofArray(read(dir, "model.gguf"));
        MemorySegment fp32 = MemorySegment.ofArray(read(dir, "model.fp32.gguf"));
        GgufFile a = GgufReader.read(orig);
        GgufFile b = GgufReader.read(fp32);
        GgufTensorInfo q = a.tensor("blk.0.attn_output.weight");
        GgufTensorInfo f = b.tensor("blk.0.attn_output.weight");
        assertEquals(GgmlType.Q8_0, q.type());
        assertEquals(GgmlType.F32, f.type());
        long blocks = q.elements() / 32;
        for (long blk = 0; blk < blocks; blk++) {
            long at = a.dataStart() + q.offset() + blk * 34;
            float d = Float.float16ToFloat(orig.get(I16, at));
            for (int i = 0; i < 32; i++) {
                float want = d * orig.get(ValueLayout.JAVA_BYTE, at + 2 + i);
                assertEquals(want, fp32.get(F32, b.dataStart() + f.offset() + 4 * (blk * 32 + i)), "block " + blk + " value " + i);
            }
        }
    }

    /** The synthesized GGUF is a GGUF whose tensors all lie inside the file and whose header names the architecture. */
    @Test
    void theSynthesizedGgufIsAWellFormedGguf() throws IOException {
        byte[] bytes = read(model("demo-st:int4"), "model.gguf");
        assertArrayEquals("GGUF".getBytes(StandardCharsets.US_ASCII), java.util.Arrays.copyOf(bytes, 4));
        GgufFile g = GgufReader.read(MemorySegment.ofArray(bytes));
        assertEquals("llama", g.kv("general.architecture").value());
        for (GgufTensorInfo t : g.tensors()) {
            assertTrue(g.dataStart() + t.offset() + t.byteSize() <= bytes.length, t.name());
            assertEquals(0, t.offset() % g.alignment(), t.name());
        }
        assertEquals(0, bytes.length % g.alignment(), "padded to the alignment at the end");
    }

    /** The safetensors header of the converted variant describes exactly the file's data. */
    @Test
    void theConvertedSafetensorsHeaderAccountsForEveryByte() throws IOException {
        byte[] bytes = read(model("demo-st:int4"), "bf16/model.safetensors");
        long headerLen = MemorySegment.ofArray(bytes).get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0);
        String header = new String(bytes, 8, (int) headerLen, StandardCharsets.UTF_8);
        assertTrue(header.contains("\"BF16\""), header);
        long maxEnd = 0;
        var m = java.util.regex.Pattern.compile("\"data_offsets\":\\[(\\d+),(\\d+)]").matcher(header);
        while (m.find()) {
            maxEnd = Math.max(maxEnd, Long.parseLong(m.group(2)));
        }
        assertEquals(bytes.length, 8 + headerLen + maxEnd);
    }

    /** The Hugging Face files of the GGUF model are JSON rebuilt from its header (tokenizer.json when read: a RebuiltFile). */
    @Test
    void theGgufModelsHuggingFaceJsonFilesParse() throws IOException {
        DirNode dir = model("demo-llama");
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        var config = json.readTree(read(dir, "config.json"));
        assertEquals("LlamaForCausalLM", config.get("architectures").get(0).asText());
        var tokenizer = json.readTree(read(dir, "tokenizer.json"));
        assertEquals("BPE", tokenizer.get("model").get("type").asText());
        assertTrue(tokenizer.get("model").get("vocab").size() > 10);
    }
}
