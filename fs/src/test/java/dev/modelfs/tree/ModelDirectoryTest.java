package dev.modelfs.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.model.ModelTable;
import dev.modelfs.view.VectorStore;
import dev.modelfs.view.VectorStore.Layer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A model directory without any view: every layer where docs/SEMANTICS.md puts it, byte for byte,
 * one-blob files sharing the blob's inode; a view that fails is left out alone.
 */
class ModelDirectoryTest {
    @TempDir
    Path root;

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String sha256(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    @Test
    void everyLayerAtItsPath() throws Exception {
        byte[] template = utf8("{{ .Prompt }}");
        byte[] license1 = utf8("MIT"), license2 = utf8("Apache-2.0");
        byte[] json = utf8("{\"a\":1}");
        byte[] odd = utf8("something new");
        DirNode dir = VectorStore.model(root, "m", "{\"model_format\":\"gguf\"}", List.of(
                new Layer("application/vnd.ollama.image.template", template, null),
                new Layer("application/vnd.ollama.image.license", license1, null),
                new Layer("application/vnd.ollama.image.license", license2, null),
                new Layer("application/vnd.ollama.image.json", json, "sub/extra.json"),
                new Layer("application/vnd.example.thing", odd, null)), List.of());
        assertArrayEquals(template, read(dir, "ollama/template"));
        assertArrayEquals(license1, read(dir, "ollama/license"));
        assertArrayEquals(license2, read(dir, "ollama/license.2"));
        assertArrayEquals(json, read(dir, "sub/extra.json"));
        assertArrayEquals(odd, read(dir, "ollama/layers/sha256-" + sha256(odd)));
        assertArrayEquals(utf8("{\"model_format\":\"gguf\"}"), read(dir, "ollama/config.json"));
        byte[] manifest = Files.readAllBytes(root.resolve("manifests/registry.ollama.ai/library/m/latest"));
        assertArrayEquals(manifest, read(dir, "ollama/manifest.json"));
        assertTrue(new String(read(dir, "ollama/Modelfile"), StandardCharsets.UTF_8).contains("TEMPLATE"), "a Modelfile with the template");
        assertEquals(Inodes.ofBlob(sha256(odd)), file(dir, "ollama/layers/sha256-" + sha256(odd)).inode(), "one-blob files share the blob's inode");
    }

    @Test
    void aFailingViewIsLeftOutAndTheOthersStillApply() throws IOException {
        ModelView failing = (ctx, tables, tree) -> {
            throw new IllegalStateException("boom");
        };
        ModelView marker = (ctx, tables, tree) -> ViewFiles.put(ctx, tree, "seen.txt",
                dev.modelfs.bytes.ByteSource.literal(utf8(String.valueOf(tables.stream().filter(t -> t instanceof ModelTable.Gguf).count()))), "test");
        DirNode dir = VectorStore.tinyLlama(root, List.of(failing, marker));
        assertArrayEquals(utf8("1"), read(dir, "seen.txt"), "the view after the failing one ran, with the GGUF's table");
        assertTrue(dir.children().containsKey("model.gguf"));
    }

    private static FileNode file(DirNode dir, String path) {
        Node n = dir;
        for (String part : path.split("/")) {
            n = ((DirNode) n).child(part);
        }
        return assertInstanceOf(FileNode.class, n, path);
    }

    private byte[] read(DirNode dir, String path) throws IOException {
        return VectorStore.read(root, file(dir, path));
    }

    /**
     * A model whose converted files do not fit its budget is built again without them: the blobs and
     * {@code ollama/} files stay, the budget holds nothing for converted files, and the same model within an
     * ample budget has them.
     */
    @Test
    void aModelOverItsBudgetKeepsOnlyItsBlobsAndOllamaFiles() throws Exception {
        DirNode full = VectorStore.tinyLlama(root, dev.modelfs.serve.StandardViews.all());
        assertTrue(full.children().size() > 2, "converted files within an ample budget: " + full.children().keySet());
        dev.modelfs.store.OllamaStore store = new dev.modelfs.store.OllamaStore(root);
        dev.modelfs.store.ManifestRef ref = store.listManifests().getFirst();
        dev.modelfs.store.Manifest m = dev.modelfs.store.ManifestParser.parse(ref.name(), store.readManifest(ref));
        ModelContext ctx = new ModelContext(store, m, dev.modelfs.store.ModelConfig.read(store, m), 0);
        dev.modelfs.model.MemoryBudget.Account tables = dev.modelfs.model.MemoryBudget.standard().account();
        dev.modelfs.model.ModelTables.load(store, m, ctx.config(), tables);
        // the tables fit, the files built from them do not
        dev.modelfs.model.MemoryBudget small = new dev.modelfs.model.MemoryBudget(tables.held() + 4096, 1L << 30);
        dev.modelfs.model.MemoryBudget.Account account = small.account();
        java.util.SortedMap<String, Node> dir = new ModelDirectory(dev.modelfs.serve.StandardViews.all()).build(ctx, account);
        assertEquals(List.of("model.gguf", "ollama"), List.copyOf(dir.keySet()));
        assertEquals(0, account.held(), "the fallback holds nothing");
        assertEquals(0, small.used());
    }
}
