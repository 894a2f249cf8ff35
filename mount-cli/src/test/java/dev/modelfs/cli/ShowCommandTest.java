package dev.modelfs.cli;

import static dev.modelfs.cli.CommandsTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code show}: a GGUF model's layers and tensors (as DemoStore wrote them), in text and JSON. */
class ShowCommandTest {
    @TempDir
    Path dir;

    @Test
    void theGgufModelsTensorsAndLayers() throws IOException {
        new DemoStore(dir).write();
        CommandsTest.Result r = run("show", "--store", dir.toString(), "--tensors", "demo-llama");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().lines().anyMatch(l -> l.strip().startsWith("format") && l.strip().endsWith("gguf")), r.out());
        assertTrue(r.out().contains("application/vnd.ollama.image.model"), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.contains("blk.0.ffn_down.weight") && l.contains("Q4_K")), r.out());
        JsonNode j = new ObjectMapper().readTree(run("show", "--store", dir.toString(), "--tensors", "--json", "demo-llama").out());
        assertEquals("gguf", j.get("format").asText());
        int tensors = 0;
        for (JsonNode t : j.get("tensors")) {
            tensors++;
        }
        assertEquals(11, tensors, "the demo GGUF's eleven tensors");
        // llama.cpp's own form: no translation of Ollama's dialect (docs/SEMANTICS.md "Ollama's GGUF dialect")
        assertEquals("model.gguf", j.get("gguf_dialect").get(0).get("file").asText());
        assertEquals("none (served as stored)", j.get("gguf_dialect").get(0).get("translation").asText());
        assertEquals(1, j.get("gguf_dialect").size(), "no embedded vision tower, so no mmproj.gguf line");
        assertTrue(r.out().lines().anyMatch(l -> l.strip().startsWith("model.gguf") && l.contains("Ollama dialect: none")), r.out());
    }
}
