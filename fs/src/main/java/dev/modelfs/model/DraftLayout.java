package dev.modelfs.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.store.Layer;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.MediaType;
import dev.modelfs.store.ModelConfig;
import java.util.Optional;

/**
 * Where a speculative-decoding draft imported with its target keeps its tensors (docs/FORMATS.md §4.3
 * H): every tensor key of the draft starts with {@code tensorPrefix} ({@code draft.}) and the draft's
 * JSON files sit in the folder {@code component} ({@code draft/config.json}). The draft's tensors form
 * the component {@code component}, so the views give the draft a model folder of its own.
 *
 * <p>Invariants: {@code tensorPrefix} is not empty; {@code component} is one safe path segment (no
 * {@code /}, not {@code .} or {@code ..}).
 */
public record DraftLayout(String tensorPrefix, String component) {
    private static final String DEFAULT_PREFIX = "draft.";
    private static final String DEFAULT_CONFIG = "draft/config.json";

    public DraftLayout {
        if (tensorPrefix.isEmpty() || !safeSegment(component)) {
            throw new IllegalArgumentException("bad draft layout " + tensorPrefix + " " + component);
        }
    }

    /**
     * The draft of a model, as Ollama's runner finds it ({@code x/mlxrunner/model/root.go}
     * {@code readDraftConfig}): the config blob's {@code draft} object when it describes safetensors
     * tensors ({@code tensor_prefix}, default {@code draft.}; {@code config}, default
     * {@code draft/config.json}), else a JSON layer {@code draft/config.json} with the prefix {@code draft.}.
     * A GGUF draft ({@code model_format} {@code gguf}, an {@code application/vnd.ollama.image.draft}
     * layer) has no tensors in the tensor layers: empty.
     */
    public static Optional<DraftLayout> of(ModelConfig config, Manifest m) {
        JsonNode d = config.json().path("draft");
        if (d.isObject()) {
            String format = d.path("model_format").asText("");
            if (!format.isEmpty() && !format.equals("safetensors")) {
                return Optional.empty();
            }
            String prefix = d.path("tensor_prefix").asText("");
            return Optional.of(new DraftLayout(prefix.isEmpty() ? DEFAULT_PREFIX : prefix,
                    folderOf(d.path("config").asText(""))));
        }
        for (Layer l : m.layers(MediaType.Kind.JSON)) {
            if (DEFAULT_CONFIG.equals(l.name())) {
                return Optional.of(new DraftLayout(DEFAULT_PREFIX, folderOf(DEFAULT_CONFIG)));
            }
        }
        return Optional.empty();
    }

    /** Whether the safetensors key (or tensor layer name) {@code key} belongs to the draft. */
    public boolean owns(String key) {
        return key.length() > tensorPrefix.length() && key.startsWith(tensorPrefix);
    }

    /** The logical name of the draft tensor {@code key}: {@code <component>/<key without the prefix>}. */
    public String logicalName(String key) {
        return component + "/" + key.substring(tensorPrefix.length());
    }

    /** The folder of {@code <folder>/config.json}; {@code draft} for any other path. */
    private static String folderOf(String configPath) {
        int slash = configPath.indexOf('/');
        if (slash > 0 && configPath.substring(slash + 1).equals("config.json") && safeSegment(configPath.substring(0, slash))) {
            return configPath.substring(0, slash);
        }
        return "draft";
    }

    private static boolean safeSegment(String s) {
        return TensorTableBuilder.safeName(s) && !s.contains("/");
    }
}
