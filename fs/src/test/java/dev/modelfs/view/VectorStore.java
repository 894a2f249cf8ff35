package dev.modelfs.view;

import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.cache.BlobMappings;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.format.Vectors;
import dev.modelfs.read.OpenedSource;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.ModelDirectory;
import dev.modelfs.tree.ModelView;
import dev.modelfs.tree.StoreTree;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** Small stores on disk laid out as Ollama writes them, for view tests: one model per call, read back through the views. */
public final class VectorStore {
    private VectorStore() {}

    /** One layer of a manifest: its media type, its bytes and its name annotation (null: none). */
    public record Layer(String mediaType, byte[] bytes, String name) {}

    /** Writes the {@code tiny-llama.gguf} vector as model {@code tiny} under {@code root} and returns its directory as {@code views} build it. */
    public static DirNode tinyLlama(Path root, List<ModelView> views) throws IOException {
        byte[] gguf = Files.readAllBytes(Vectors.file("tiny-llama.gguf"));
        return model(root, "tiny", "{\"model_format\":\"gguf\",\"model_family\":\"llama\",\"file_type\":\"Q8_0\"}",
                List.of(new Layer("application/vnd.ollama.image.model", gguf, null)), views);
    }

    /** Writes model {@code name} (config blob {@code config}, {@code layers}) under {@code root}; its directory as {@code views} build it. */
    public static DirNode model(Path root, String name, String config, List<Layer> layers, List<ModelView> views) throws IOException {
        byte[] c = config.getBytes(StandardCharsets.UTF_8);
        List<String> ls = new ArrayList<>();
        for (Layer l : layers) {
            ls.add("{\"mediaType\":\"" + l.mediaType() + "\",\"digest\":\"sha256:" + blob(root, l.bytes()) + "\",\"size\":" + l.bytes().length
                    + (l.name() == null ? "" : ",\"name\":\"" + l.name() + "\"") + "}");
        }
        Path m = root.resolve("manifests/registry.ollama.ai/library/" + name + "/latest");
        Files.createDirectories(m.getParent());
        Files.writeString(m, "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
                + "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" + blob(root, c)
                + "\",\"size\":" + c.length + "},\"layers\":[" + String.join(",", ls) + "]}");
        StoreTree tree = new StoreTree(new OllamaStore(root), new ModelDirectory(views));
        tree.refresh();
        return (DirNode) tree.root().child(name);
    }

    /** The whole content of {@code f}, read as a reader of the mount would (through the store's blobs). */
    public static byte[] read(Path root, FileNode f) throws IOException {
        try (BlobMappings m = new BlobMappings(4); ChunkCache chunks = new ChunkCache(1 << 22);
                OpenedSource o = OpenedSource.open(f.source(), BlobResolver.forStore(new OllamaStore(root), m), chunks)) {
            byte[] out = new byte[Math.toIntExact(f.size())];
            o.read(0, MemorySegment.ofArray(out), 0, out.length);
            return out;
        }
    }

    private static String blob(Path root, byte[] content) throws IOException {
        try {
            String hex = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
            Files.createDirectories(root.resolve("blobs"));
            Files.write(root.resolve("blobs/sha256-" + hex), content);
            return hex;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
