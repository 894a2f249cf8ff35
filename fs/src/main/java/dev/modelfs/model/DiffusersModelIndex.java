package dev.modelfs.model;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * A diffusers pipeline's {@code model_index.json} restored from the copy Ollama's image importer
 * stored (docs/FORMATS.md §4.4, SEMANTICS.md "Image models"): Ollama renamed {@code _class_name} to
 * {@code architecture}, deleted {@code _diffusers_version} and added {@code parameter_count} and
 * {@code quantization}; diffusers needs the first two and does not know the last two.
 *
 * <p>The restored file is {@code {"_class_name": <architecture>, "_diffusers_version":
 * }{@value #DIFFUSERS_VERSION}{@code , <every other key>}}, laid out as diffusers writes it
 * ({@code ConfigMixin.to_json_string}: Python's {@code json.dumps(indent=2, sort_keys=True)} and a
 * final newline). Invariant: a pure function of the stored bytes; component entries
 * ({@code "transformer": ["diffusers", "ZImageTransformer2DModel"]} …) and any other key keep their values.
 */
public final class DiffusersModelIndex {
    /** The name of the file, in the model folder's root. */
    public static final String NAME = "model_index.json";
    /**
     * The {@code _diffusers_version} written: the first diffusers release with the pipelines Ollama
     * imported (Z-Image; diffusers only warns when a file names a version newer than itself).
     */
    public static final String DIFFUSERS_VERSION = "0.36.0";
    private static final Set<String> OLLAMA_KEYS = Set.of("architecture", "parameter_count", "quantization");
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);
    /** Python's {@code json.dumps(indent=2)}: {@code "key": value}, one element per line, {@code []} and {@code {}} when empty. */
    private static final ObjectWriter PYTHON_INDENT_2 = JSON.writer(new DefaultPrettyPrinter()
            .withObjectIndenter(new DefaultIndenter("  ", "\n"))
            .withArrayIndenter(new DefaultIndenter("  ", "\n"))
            .withSeparators(Separators.createDefaultInstance()
                    .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
                    .withObjectEmptySeparator("")
                    .withArrayEmptySeparator("")));

    private DiffusersModelIndex() {}

    /**
     * The restored file, or null when {@code stored} is not an Ollama-rewritten index (not a JSON
     * object, already has {@code _class_name}, or has no textual {@code architecture}): then the
     * stored bytes are served as they are.
     *
     * @throws IOException when {@code stored} is not JSON
     */
    public static byte[] restore(byte[] stored) throws IOException {
        JsonNode n = JSON.readTree(stored);
        if (n == null || !n.isObject() || n.has("_class_name") || !n.path("architecture").isTextual()) {
            return null;
        }
        ObjectNode out = JSON.createObjectNode();
        out.put("_class_name", n.get("architecture").asText());
        out.put("_diffusers_version", DIFFUSERS_VERSION);
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!OLLAMA_KEYS.contains(e.getKey()) && !e.getKey().equals("_diffusers_version")) {
                out.set(e.getKey(), e.getValue());
            }
        }
        try {
            // a plain Map tree, so that ORDER_MAP_ENTRIES_BY_KEYS sorts every level as sort_keys does
            return (PYTHON_INDENT_2.writeValueAsString(JSON.convertValue(out, Object.class)) + "\n").getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
