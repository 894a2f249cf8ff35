package dev.modelfs.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.store.Layer;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.MediaType;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.logging.Logger;

/**
 * The {@code config.json} JSON layers of a safetensors-based model, by component: {@code ""} for the
 * root's {@code config.json}, {@code c} for {@code c/config.json} (diffusers pipelines);
 * {@code modelIndex} is the stored {@code model_index.json} of an image model (diffusers pipeline), or null.
 *
 * <p>Invariants: every value (and {@code modelIndex}) is a JSON object; a layer that cannot be read or is not an object is
 * absent (an unreadable one logged once when read); deeper paths ({@code a/b/config.json}) are ignored.
 */
public record ComponentConfigs(Map<String, JsonNode> byComponent, JsonNode modelIndex) {
    private static final Logger LOG = Logger.getLogger(ComponentConfigs.class.getName());
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_BYTES = 16 << 20;
    private static final String MODEL_INDEX = DiffusersModelIndex.NAME;

    public ComponentConfigs {
        byComponent = Map.copyOf(byComponent);
    }

    /** Reads the config.json and model_index.json layers of {@code m} from {@code store}. */
    public static ComponentConfigs read(OllamaStore store, Manifest m) {
        Map<String, JsonNode> out = new HashMap<>();
        JsonNode index = null;
        for (Layer l : m.layers(MediaType.Kind.JSON)) {
            if (l.name() == null || l.digest().isEmpty()) {
                continue;
            }
            String component;
            if (l.name().equals(MODEL_INDEX)) {
                component = MODEL_INDEX;
            } else if (l.name().equals("config.json")) {
                component = "";
            } else if (l.name().endsWith("/config.json") && l.name().indexOf('/') == l.name().length() - "/config.json".length()) {
                component = l.name().substring(0, l.name().indexOf('/'));
            } else {
                continue;
            }
            try {
                JsonNode n = JSON.readTree(store.readSmallBlob(l.digest().get(), MAX_BYTES));
                if (n != null && n.isObject() && component.equals(MODEL_INDEX)) {
                    index = n;
                } else if (n != null && n.isObject()) {
                    out.put(component, n);
                }
            } catch (IOException e) {
                LOG.warning(m.name() + ": cannot read " + l.name() + ": " + e.getMessage());
            }
        }
        return new ComponentConfigs(out, index);
    }

    /**
     * The {@code quantization} Ollama's image importer added to {@code model_index.json}
     * (docs/FORMATS.md §4.4), or null.
     */
    public String imageQuantization() {
        JsonNode q = modelIndex == null ? null : modelIndex.get("quantization");
        return q != null && q.isTextual() ? q.asText() : null;
    }

    /** The config.json of {@code component}, or null. */
    public JsonNode get(String component) {
        return byComponent.get(component);
    }

    /**
     * The {@code quantization} (else {@code quantization_config}) section that applies to
     * {@code component}: its own config.json's, else the root's; null if none.
     */
    public JsonNode quantSection(String component) {
        JsonNode c = byComponent.getOrDefault(component, byComponent.get(""));
        if (c == null) {
            return null;
        }
        JsonNode q = c.get("quantization");
        return q != null && q.isObject() ? q : c.get("quantization_config");
    }
}
