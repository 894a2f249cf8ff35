package dev.modelfs.view;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.convert.OutputType;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code config.json} a dtype variant folder gets (docs/SEMANTICS.md "One weight set per folder"): the model's
 * own, with its {@code torch_dtype} (transformers 4's key) and {@code dtype} (transformers 5's) saying the folder's
 * dtype, so that {@code from_pretrained(dir + "/fp32")}, whose default dtype in transformers 5 is the config's, loads
 * float32 weights as float32 (an F16 GGUF's folder says {@code float16}; an int4 import's says {@code bfloat16}).
 *
 * <p>Invariants: only those two keys change, at the top and in the sub-model sections transformers reads them from
 * ({@code text_config}, {@code vision_config} … : objects named {@code *_config} other than
 * {@code quantization_config}); a config that names no dtype, names this one already, or is not a JSON object is
 * copied unchanged ({@link #rewrite} returns null).
 */
final class VariantConfig {
    static final String NAME = "config.json";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> KEYS = List.of("torch_dtype", "dtype");

    private VariantConfig() {}

    /** Whether the file at {@code rel} (a path inside a model folder) is a transformers or diffusers config. */
    static boolean applies(String rel) {
        return rel.equals(NAME) || rel.endsWith("/" + NAME);
    }

    /** The JSON object in {@code bytes}, or null when they are not one. */
    static JsonNode parse(byte[] bytes) {
        try {
            JsonNode n = JSON.readTree(bytes);
            return n != null && n.isObject() ? n : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** {@code config} saying {@code out}'s dtype, or null when nothing would change. */
    static byte[] rewrite(JsonNode config, OutputType out) {
        if (config == null || !config.isObject()) {
            return null;
        }
        ObjectNode copy = config.deepCopy();
        if (!retype(copy, torchName(out))) {
            return null;
        }
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(copy);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a JSON tree that was just parsed writes back", e);
        }
    }

    /** torch's name of {@code out}'s dtype, as configs spell it. */
    static String torchName(OutputType out) {
        return switch (out) {
            case F32 -> "float32";
            case F16 -> "float16";
            case BF16 -> "bfloat16";
        };
    }

    private static boolean retype(ObjectNode n, String dtype) {
        boolean changed = false;
        for (String k : KEYS) {
            JsonNode v = n.get(k);
            if (v != null && v.isTextual() && !v.asText().equals(dtype)) {
                n.put(k, dtype);
                changed = true;
            }
        }
        List<String> sections = new ArrayList<>();
        n.fieldNames().forEachRemaining(f -> {
            if (f.endsWith("_config") && !f.equals("quantization_config") && n.get(f).isObject()) {
                sections.add(f);
            }
        });
        for (String f : sections) {
            changed |= retype((ObjectNode) n.get(f), dtype);
        }
        return changed;
    }
}
