package dev.modelfs.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OllamaStoreTest {
    @TempDir
    Path root;

    private void file(String rel, String content) throws IOException {
        Path p = root.resolve(rel);
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
    }

    @Test
    void findsExactlyFourLevelManifestsWithValidNames() throws IOException {
        file("manifests/registry.ollama.ai/library/llama3.2/1b", "{}");
        file("manifests/hf.co/user/repo/Q4_K_M", "{}");
        file("manifests/registry.ollama.ai/library/toodeep/tag/extra", "{}");
        file("manifests/registry.ollama.ai/library/shallow", "{}");
        file("manifests/registry.ollama.ai/library/bad name!/latest", "{}");
        Files.createDirectories(root.resolve("manifests/registry.ollama.ai/library/dirmodel/latest"));
        List<ManifestRef> refs = new OllamaStore(root).listManifests();
        assertEquals(List.of("hf.co/user/repo/Q4_K_M", "registry.ollama.ai/library/llama3.2/1b"),
                refs.stream().map(r -> r.name().manifestPath()).toList());
    }

    @Test
    void anInvalidManifestIsReportedOnceHoweverOftenTheStoreIsScanned() throws IOException {
        file("manifests/registry.ollama.ai/library/bad name!/latest", "{}");
        java.util.List<String> lines = new java.util.ArrayList<>();
        java.util.logging.Logger log = java.util.logging.Logger.getLogger(OllamaStore.class.getName());
        java.util.logging.Handler h = new java.util.logging.Handler() {
            @Override public void publish(java.util.logging.LogRecord r) { lines.add(r.getMessage()); }
            @Override public void flush() { }
            @Override public void close() { }
        };
        log.addHandler(h);
        try {
            OllamaStore s = new OllamaStore(root);
            for (int i = 0; i < 5; i++) {
                assertTrue(s.listManifests().isEmpty());
            }
        } finally {
            log.removeHandler(h);
        }
        assertEquals(1, lines.size(), lines.toString());
        assertTrue(lines.getFirst().contains("bad name!"));
    }

    @Test
    void blobLookupPrefersDashThenLegacyColonAndIgnoresPartials() throws IOException {
        String a = "a".repeat(64), b = "b".repeat(64), c = "c".repeat(64);
        file("blobs/sha256-" + a, "x");
        file("blobs/sha256:" + b, "y");
        file("blobs/sha256-" + c + "-partial", "z");
        file("blobs/sha256-" + c + ".tmp", "z");
        OllamaStore s = new OllamaStore(root);
        assertEquals(root.resolve("blobs/sha256-" + a), s.blobPath(new Digest(a)).orElseThrow());
        assertEquals(root.resolve("blobs/sha256:" + b), s.blobPath(new Digest(b)).orElseThrow());
        assertTrue(s.blobPath(new Digest(c)).isEmpty());
        assertEquals(root.resolve("blobs/sha256-" + b), s.canonicalBlobPath(new Digest(b)));
    }

    @Test
    void blobsAreOpenedThroughTheTrustedOpenOnlyAsRegularFiles() throws Exception {
        String a = "a".repeat(64), b = "b".repeat(64), f = "f".repeat(64), d = "d".repeat(64);
        file("blobs/sha256-" + a, "x");
        file("blobs/sha256:" + b, "yy");
        assertEquals(0, new ProcessBuilder("mkfifo", root.resolve("blobs/sha256-" + f).toString()).start().waitFor());
        Files.createDirectories(root.resolve("blobs/sha256-" + d));
        OllamaStore s = new OllamaStore(root);
        try (var nf = s.openBlob(new Digest(a))) {
            assertEquals(1, nf.stat().size());
        }
        assertEquals("yy", new String(s.readSmallBlob(new Digest(b), 10), java.nio.charset.StandardCharsets.UTF_8), "legacy name");
        for (String special : List.of(f, d, "e".repeat(64))) {   // FIFO (must not block), directory, missing
            assertThrows(java.nio.file.NoSuchFileException.class, () -> s.openBlob(new Digest(special)));
            assertThrows(java.nio.file.NoSuchFileException.class, () -> s.readSmallBlob(new Digest(special), 10));
        }
        assertThrows(IOException.class, () -> s.readSmallBlob(new Digest(b), 1), "larger than the limit");
    }

    @Test
    void rootResolution() {
        assertEquals(Path.of("/x"), OllamaStore.resolveRoot(Optional.of(Path.of("/x")), Map.of("OLLAMA_MODELS", "/y")));
        assertEquals(Path.of("/y z"), OllamaStore.resolveRoot(Optional.empty(), Map.of("OLLAMA_MODELS", "  \"/y z\" ")));
        assertEquals(Path.of("/h/.ollama/models"), OllamaStore.resolveRoot(Optional.empty(), Map.of("OLLAMA_MODELS", "  ", "HOME", "/h")));
        assertEquals(Path.of("/h/.ollama/models"), OllamaStore.resolveRoot(Optional.empty(), Map.of("HOME", "/h")));
    }
}
