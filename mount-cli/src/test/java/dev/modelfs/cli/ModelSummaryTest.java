package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.modelfs.store.Manifest;
import dev.modelfs.store.ManifestParser;
import dev.modelfs.store.ManifestRef;
import dev.modelfs.store.ModelConfig;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The format and quantization columns over the demo store, whose make-up DemoStore states: demo-llama
 * is a GGUF of four Q8_0, two Q4_0 and one Q4_K tensors (config file_type Q8_0); demo-st:int4 has seven
 * MLX int4 projections (config file_type int4).
 */
class ModelSummaryTest {
    @TempDir
    Path dir;
    OllamaStore store;

    @BeforeEach
    void demo() throws IOException {
        new DemoStore(dir).write();
        store = new OllamaStore(dir);
    }

    Manifest manifest(String name) throws IOException {
        for (ManifestRef ref : store.listManifests()) {
            if (ref.name().toString().startsWith(name)) {
                return ManifestParser.parse(ref.name(), store.readManifest(ref));
            }
        }
        throw new AssertionError("no model " + name);
    }

    @Test
    void theConfigsFileTypeWins() throws IOException {
        Manifest llama = manifest("demo-llama");
        assertEquals("Q8_0", ModelSummary.quantization(store, llama, ModelSummary.config(store, llama)));
        assertEquals("gguf", ModelSummary.format(llama, ModelSummary.config(store, llama)));
        Manifest st = manifest("demo-st");
        assertEquals("int4", ModelSummary.quantization(store, st, ModelSummary.config(store, st)));
        assertEquals("safetensors", ModelSummary.format(st, ModelConfig.EMPTY));
    }

    @Test
    void withoutAFileTypeTheQuantizedTensorTypesMostUsedFirst() throws IOException {
        assertEquals("Q8_0+Q4_0+Q4_K", ModelSummary.quantization(store, manifest("demo-llama"), ModelConfig.EMPTY));
        assertEquals("int4", ModelSummary.quantization(store, manifest("demo-st"), ModelConfig.EMPTY));
    }
}
