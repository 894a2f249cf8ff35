package dev.modelfs.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.store.Manifest;
import dev.modelfs.store.ManifestParser;
import dev.modelfs.store.ModelConfig;
import dev.modelfs.store.ModelName;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** How a draft's tensors are found (docs/FORMATS.md §4.3 H, Ollama's readDraftConfig). */
class DraftLayoutTest {
    static final String JSON_LAYER = "{\"mediaType\":\"application/vnd.ollama.image.json\",\"digest\":\"sha256:"
            + "a".repeat(64) + "\",\"size\":2,\"name\":\"draft/config.json\"}";

    static Manifest manifest(String... layers) {
        return ManifestParser.parse(ModelName.parse("t").orElseThrow(),
                ("{\"layers\":[" + String.join(",", layers) + "]}").getBytes(StandardCharsets.UTF_8));
    }

    static Optional<DraftLayout> of(String config, Manifest m) {
        return DraftLayout.of(ModelConfig.parse(config.getBytes(StandardCharsets.UTF_8)), m);
    }

    @Test
    void theConfigBlobsDraftObjectDecides() {
        DraftLayout d = of("{\"draft\":{\"model_format\":\"safetensors\",\"architecture\":\"DFlashDraftModel\","
                + "\"tensor_prefix\":\"mtp.\",\"config\":\"assistant/config.json\"}}", manifest()).orElseThrow();
        assertEquals(new DraftLayout("mtp.", "assistant"), d);
        assertTrue(d.owns("mtp.layers.0.weight"));
        assertFalse(d.owns("mtp."));
        assertFalse(d.owns("model.mtp.x"));
        assertEquals("assistant/layers.0.weight", d.logicalName("mtp.layers.0.weight"));
    }

    @Test
    void defaultsAndTheDraftConfigLayerAlone() {
        assertEquals(new DraftLayout("draft.", "draft"), of("{\"draft\":{}}", manifest()).orElseThrow());
        assertEquals(new DraftLayout("draft.", "draft"), of("{}", manifest(JSON_LAYER)).orElseThrow());
        assertEquals(new DraftLayout("draft.", "draft"),
                of("{\"draft\":{\"config\":\"../x/config.json\"}}", manifest()).orElseThrow(), "an unsafe folder falls back to draft/");
        assertTrue(of("{}", manifest()).isEmpty());
    }

    @Test
    void aGgufDraftHasNoTensorsInTheTensorLayers() {
        assertTrue(of("{\"draft\":{\"model_format\":\"gguf\",\"architecture\":\"llama\"}}", manifest(JSON_LAYER)).isEmpty());
    }
}
