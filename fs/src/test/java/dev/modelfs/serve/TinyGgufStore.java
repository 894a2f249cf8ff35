package dev.modelfs.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.modelfs.format.Vectors;
import dev.modelfs.read.OpenedSource;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.Node;
import dev.modelfs.tree.StoreTree;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** A real store on disk for tests: the {@code tiny-llama.gguf} vector as the Ollama model {@code tiny}. */
public final class TinyGgufStore {
    private TinyGgufStore() {}

    /** Writes the store under {@code root} and opens it. */
    public static OllamaStore create(Path root) throws IOException {
        return create(root, Vectors.bytes("tiny-llama.gguf"));
    }

    /** Writes a store of the GGUF {@code gguf} as the model {@code tiny} under {@code root} and opens it. */
    public static OllamaStore create(Path root, byte[] gguf) throws IOException {
        byte[] config = "{\"model_format\":\"gguf\",\"model_family\":\"llama\"}".getBytes(StandardCharsets.UTF_8);
        String model = blob(root, gguf);
        String cfg = blob(root, config);
        String manifest = "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
                + "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" + cfg
                + "\",\"size\":" + config.length + "},\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\","
                + "\"digest\":\"sha256:" + model + "\",\"size\":" + gguf.length + "}]}";
        Path m = root.resolve("manifests/registry.ollama.ai/library/tiny/latest");
        Files.createDirectories(m.getParent());
        Files.writeString(m, manifest);
        return new OllamaStore(root);
    }

    private static String blob(Path root, byte[] data) throws IOException {
        String hex = HexFormat.of().formatHex(sha256().digest(data));
        Files.createDirectories(root.resolve("blobs"));
        Files.write(root.resolve("blobs/sha256-" + hex), data);
        return hex;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Every file of the tree (building every model directory). */
    public static List<FileNode> files(StoreTree tree) {
        List<FileNode> out = new ArrayList<>();
        List<DirNode> dirs = new ArrayList<>(List.of(tree.root()));
        while (!dirs.isEmpty()) {
            for (Node n : dirs.removeLast().children().values()) {
                switch (n) {
                    case DirNode d -> dirs.add(d);
                    case FileNode f -> out.add(f);
                }
            }
        }
        return out;
    }

    /** SHA-256 of every file of {@code served}, read whole through {@link OpenedSource}, by inode (stable across trees). */
    public static Map<Long, String> digests(ServedTree served) throws IOException {
        Map<Long, String> out = new TreeMap<>();
        for (FileNode f : files(served.tree())) {
            MessageDigest md = sha256();
            try (OpenedSource o = OpenedSource.open(f.source(), served.resolver(), served.chunks()); Arena a = Arena.ofConfined()) {
                MemorySegment buf = a.allocate(Math.max(1, f.size()));
                assertEquals(f.size(), Math.max(0, o.read(0, buf, 0, f.size())));
                md.update(buf.asSlice(0, f.size()).toArray(ValueLayout.JAVA_BYTE));
            }
            out.put(f.inode(), HexFormat.of().formatHex(md.digest()));
        }
        return out;
    }
}
