package dev.modelfs.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The manifest's config blob ({@code ConfigV2}, docs/FORMATS.md §3), read leniently: every field is
 * optional and unknown fields are kept in {@link #json()}.
 *
 * <p>Invariant: accessors never throw; absent or mistyped fields read as empty strings / lists.
 */
public record ModelConfig(JsonNode json) {
    private static final ObjectMapper JSON = new ObjectMapper();
    public static final ModelConfig EMPTY = new ModelConfig(MissingNode.getInstance());

    public static ModelConfig parse(byte[] raw) {
        try {
            JsonNode n = JSON.readTree(raw);
            return n != null && n.isObject() ? new ModelConfig(n) : EMPTY;
        } catch (IOException e) {
            return EMPTY;
        }
    }

    /** Largest config blob read; real ones are a few hundred bytes. */
    public static final int MAX_BYTES = 1 << 20;

    /**
     * Reads and parses a manifest's config blob.
     *
     * @throws IOException if the manifest names a config blob that cannot be read (missing, too large)
     */
    public static ModelConfig read(OllamaStore store, Manifest m) throws IOException {
        if (m.config().digest().isEmpty()) {
            return EMPTY;
        }
        return parse(store.readSmallBlob(m.config().digest().get(), MAX_BYTES));
    }

    public String modelFormat() {
        return json.path("model_format").asText("");
    }

    public String fileType() {
        return json.path("file_type").asText("");
    }

    public List<String> capabilities() {
        List<String> out = new ArrayList<>();
        json.path("capabilities").forEach(c -> out.add(c.asText()));
        return out;
    }
}
