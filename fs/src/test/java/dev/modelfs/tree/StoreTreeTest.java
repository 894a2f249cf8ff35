package dev.modelfs.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StoreTreeTest {
    @TempDir
    Path root;

    private void manifest(String model, String content) throws IOException {
        Path p = root.resolve("manifests/registry.ollama.ai/library/" + model + "/latest");
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
    }

    @Test
    void aBrokenManifestIsLoggedOncePerChangeOfItsOwnFileNotOnEveryRescan() throws IOException {
        List<String> lines = new ArrayList<>();
        Logger log = Logger.getLogger(StoreTree.class.getName());
        Handler h = new Handler() {
            @Override public void publish(LogRecord r) { lines.add(r.getMessage()); }
            @Override public void flush() { }
            @Override public void close() { }
        };
        log.addHandler(h);
        try {
            manifest("broken", "{not json");
            StoreTree tree = new StoreTree(new OllamaStore(root), new ModelDirectory(List.of()));
            assertEquals(1, lines.size(), lines.toString());
            assertTrue(lines.getFirst().contains("broken"), lines.toString());

            manifest("other", "[]");                    // another manifest changes: the store is rescanned
            assertTrue(tree.refresh());
            manifest("third", "[]");
            assertTrue(tree.refresh());
            assertEquals(1, lines.stream().filter(l -> l.contains("broken")).count(), lines.toString());
            assertEquals(3, lines.size(), "one line for each new broken manifest: " + lines);

            manifest("broken", "{still not json}");    // the broken manifest itself changes: one new line
            assertTrue(tree.refresh());
            assertEquals(2, lines.stream().filter(l -> l.contains("broken")).count(), lines.toString());
            assertTrue(tree.models().isEmpty());
        } finally {
            log.removeHandler(h);
        }
    }
}
