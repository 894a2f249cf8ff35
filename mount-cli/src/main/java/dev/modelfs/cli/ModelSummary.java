package dev.modelfs.cli;

import dev.modelfs.store.Manifest;
import dev.modelfs.store.MediaType;
import dev.modelfs.store.ModelConfig;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;

/** Small facts about a model shared by {@code ls} and {@code show}. */
final class ModelSummary {
    private ModelSummary() {}

    static ModelConfig config(OllamaStore st, Manifest m) {
        try {
            return ModelConfig.read(st, m);
        } catch (IOException e) {
            return ModelConfig.EMPTY;
        }
    }

    static String format(Manifest m, ModelConfig c) {
        if (m.first(MediaType.Kind.MODEL) != null) {
            return "gguf";
        }
        if (m.first(MediaType.Kind.TENSOR) != null) {
            return "safetensors";
        }
        return c.modelFormat().isEmpty() ? "-" : c.modelFormat();
    }
}
