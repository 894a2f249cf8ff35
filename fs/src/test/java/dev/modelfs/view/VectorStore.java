package dev.modelfs.view;

import dev.modelfs.format.Vectors;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.ModelDirectory;
import dev.modelfs.tree.ModelView;
import dev.modelfs.tree.StoreTree;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/** A store on disk holding one GGUF model, the {@code tiny-llama.gguf} vector, as Ollama lays it out; for view tests. */
public final class VectorStore {
    private VectorStore() {}

    /** Writes the store under {@code root} (model {@code tiny}) and returns the model's directory as {@code views} build it. */
    public static DirNode tinyLlama(Path root, List<ModelView> views) throws IOException {
        byte[] gguf = Files.readAllBytes(Vectors.file("tiny-llama.gguf"));
        byte[] config = "{\"model_format\":\"gguf\",\"model_family\":\"llama\",\"file_type\":\"Q8_0\"}".getBytes(StandardCharsets.UTF_8);
        String g = blob(root, gguf);
        String c = blob(root, config);
        Path m = root.resolve("manifests/registry.ollama.ai/library/tiny/latest");
        Files.createDirectories(m.getParent());
        Files.writeString(m, "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
                + "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" + c
                + "\",\"size\":" + config.length + "},\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256:"
                + g + "\",\"size\":" + gguf.length + "}]}");
        StoreTree tree = new StoreTree(new OllamaStore(root), new ModelDirectory(views));
        tree.refresh();
        return (DirNode) tree.root().child("tiny");
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
