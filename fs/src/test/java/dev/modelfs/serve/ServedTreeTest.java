package dev.modelfs.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.store.OllamaStore;
import dev.modelfs.testing.Poll;
import dev.modelfs.tree.DirNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
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

    /** A failure the warm-up's private policy met and a client's policy then met again is logged once. */
    @Test
    void theWarmupsPolicyAndAClientsShareOneFailureLog() throws Exception {
        Files.createDirectories(store.resolve("blobs"));
        List<String> lines = new ArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                synchronized (lines) {
                    lines.add(r.getMessage());
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        Logger log = Logger.getLogger(ServePolicy.class.getName());
        log.addHandler(capture);
        try (ServedTree served = ServedTree.open(new OllamaStore(store), List.of(), 1 << 20, 20)) {
            served.warmupPolicy(0, 0).failed("open /m/model.gguf", new java.io.IOException("size 160, manifest says 9"));
            served.policy(0, 0).failed("open /m/model.gguf", new java.io.IOException("size 160, manifest says 9"));
            served.policy(0, 0).failed("open /m/other.gguf", new java.io.IOException("gone"));
        } finally {
            log.removeHandler(capture);
        }
        synchronized (lines) {
            assertEquals(1, lines.stream().filter(l -> l.startsWith("open /m/model.gguf")).count(), lines.toString());
            assertEquals(1, lines.stream().filter(l -> l.startsWith("open /m/other.gguf")).count(), lines.toString());
        }
    }
}
