package dev.modelfs.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.store.OllamaStore;
import dev.modelfs.testing.Poll;
import dev.modelfs.tree.DirNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServedTreeTest {
    @TempDir
    Path store;

    /** The refresher picks up a model written after the tree was opened; close is idempotent. */
    @Test
    void theRefresherShowsNewModelsAndCloseIsIdempotent() throws Exception {
        Files.createDirectories(store.resolve("blobs"));
        ServedTree served = ServedTree.open(new OllamaStore(store), List.of(), 1 << 20, 20);
        try {
            assertTrue(served.tree().root().children().isEmpty());
            Path m = store.resolve("manifests/registry.ollama.ai/library/late/latest");
            Files.createDirectories(m.getParent());
            Files.writeString(m, "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\","
                    + "\"digest\":\"sha256:" + "0".repeat(64) + "\",\"size\":0},\"layers\":[]}");
            Poll.until("the rescan found the new manifest", Duration.ofSeconds(10), () -> served.tree().root().child("late") != null);
            DirNode late = (DirNode) served.tree().root().child("late");
            ServePolicy p = served.policy(5, 6);
            assertEquals(5, p.attributes(late).uid());
            assertTrue(p.attributes(late).directory());
        } finally {
            served.close();
            served.close();
        }
    }
}
