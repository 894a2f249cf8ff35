package dev.modelfs.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.serve.StandardViews;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.tree.ModelView;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request whose handling throws an {@code Error} is answered, and the FUSE workers carry on: a real
 * in-process mount (needs {@code /dev/fuse} and {@code fusermount}, fails without them) over a real store
 * whose one model has a view that fails the way a bug or an exhausted stack does.
 */
class FuseWorkerGuardTest {
    @TempDir
    Path tmp;

    private static final ModelView THROWS = (ctx, tables, tree) -> {
        throw new StackOverflowError("a view failed");
    };

    @Test
    void aRequestWhoseHandlingThrowsIsAnsweredWithEioAndWorkersCarryOn() throws Exception {
        Path store = tmp.resolve("store");
        writeModel(store, "boom");
        Path mp = Files.createDirectories(tmp.resolve("mnt"));
        List<ModelView> views = new ArrayList<>(StandardViews.all());
        views.add(THROWS);
        MountOptions opts = new MountOptions(false, 0, 0, List.of(), 8 << 20, 100, false, 2);
        try (MountSession session = MountSession.mount(new OllamaStore(store), mp, opts, views)) {
            assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
                for (int i = 0; i < 10; i++) {           // more requests than the two workers
                    IOException e = assertThrows(IOException.class, () -> Files.size(mp.resolve("boom/ollama/manifest.json")));
                    assertTrue(String.valueOf(e.getMessage()).contains("Input/output error"), String.valueOf(e));
                }
                try (var s = Files.list(mp)) {
                    assertEquals(List.of("boom"), s.map(p -> p.getFileName().toString()).toList(),
                            "the root is still listed: the workers carry on");
                }
            });
        }
    }

    private static void writeModel(Path store, String name) throws Exception {
        byte[] config = new ObjectMapper().writeValueAsBytes(Map.of("model_format", "gguf"));
        String digest = "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(config));
        Files.createDirectories(store.resolve("blobs"));
        Files.write(store.resolve("blobs").resolve(digest.replace(':', '-')), config);
        Path manifest = store.resolve("manifests/registry.ollama.ai/library").resolve(name).resolve("latest");
        Files.createDirectories(manifest.getParent());
        new ObjectMapper().writeValue(manifest.toFile(), Map.of("schemaVersion", 2,
                "mediaType", "application/vnd.docker.distribution.manifest.v2+json",
                "config", Map.of("mediaType", "application/vnd.docker.container.image.v1+json", "digest", digest, "size", config.length),
                "layers", List.of()));
    }
}
