package dev.modelfs.cli;

import dev.modelfs.store.Manifest;
import dev.modelfs.store.MediaType;
import dev.modelfs.store.ModelConfig;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.model.ModelTable;
import dev.modelfs.model.ModelTables;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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

    /**
     * The quantization {@code ollama list} would show: the config's {@code file_type}, else (legacy
     * layouts whose config has none) what the tensors say: the quantization types of the quantized
     * tensors, most used first ({@code int4+int8}), else the most used element type ({@code BF16}); "-"
     * for models without readable tensors.
     */
    static String quantization(OllamaStore st, Manifest m, ModelConfig c) {
        if (!c.fileType().isEmpty()) {
            return c.fileType();
        }
        Map<String, Integer> quantized = new HashMap<>();
        Map<String, Integer> plain = new HashMap<>();
        for (ModelTable t : ModelTables.load(st, m, c)) {
            switch (t) {
                case ModelTable.Gguf g when g.folder().isEmpty() -> g.file().tensors().forEach(i ->
                        (i.type().isQuantized() ? quantized : plain).merge(i.type().name(), 1, Integer::sum));
                case ModelTable.Gguf draft -> { }
                case ModelTable.Safetensors s -> s.table().tensors().forEach(lt -> {
                    if (lt.quantized()) {
                        quantized.merge(lt.quant().canonicalName(), 1, Integer::sum);
                    } else {
                        plain.merge(lt.main().dtype().name(), 1, Integer::sum);
                    }
                });
                case ModelTable.UnreadableGguf u -> { }
            }
        }
        Map<String, Integer> counts = quantized.isEmpty() ? plain : quantized;
        List<String> names = counts.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
                .map(Map.Entry::getKey).toList();
        if (names.isEmpty()) {
            return "-";
        }
        return quantized.isEmpty() ? names.getFirst() : String.join("+", names);
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
