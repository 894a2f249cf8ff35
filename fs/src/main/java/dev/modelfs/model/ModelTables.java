package dev.modelfs.model;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.store.Layer;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.MediaType;
import dev.modelfs.store.ModelConfig;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The model stage's entry point: builds every tensor table of one model from the store, for both
 * formats (docs/DESIGN.md: store → model → view).
 *
 * <p>Invariants: reads only blob headers and small JSON layers; never throws for bad input (a bad
 * GGUF header is an {@link ModelTable.UnreadableGguf}, a bad tensor blob a problem line in its
 * {@link TensorTable}); the result lists the first GGUF model layer's table (if the manifest has one),
 * then the first GGUF draft layer's (folder {@code draft}), then the safetensors table (if it has
 * tensor layers), and is empty for models with none of them.
 */
public final class ModelTables {
    /** The folder of a GGUF draft layer's files (docs/FORMATS.md §4.3 H). */
    public static final String DRAFT_FOLDER = "draft";

    private ModelTables() {}

    /** The tables of one model on its own (the per-model budget only: for the CLI). */
    public static List<ModelTable> load(OllamaStore store, Manifest m, ModelConfig config) {
        return load(store, m, config, MemoryBudget.standard().account());
    }

    /**
     * The tables of one model, charged to {@code budget} ({@link MemoryBudget}) on top of what it holds: a GGUF
     * whose header claims more tensors than the budget grants is not parsed, one whose metadata would not fit
     * stops parsing at the first charge refused (both an {@link ModelTable.UnreadableGguf} saying so); a
     * safetensors table over it is replaced by an empty one whose problem line says so.
     */
    public static List<ModelTable> load(OllamaStore store, Manifest m, ModelConfig config, MemoryBudget.Account budget) {
        List<ModelTable> out = new ArrayList<>(2);
        BlobHeaders headers = new BlobHeaders(store);
        Layer model = m.first(MediaType.Kind.MODEL);
        if (model != null && model.digest().isPresent()) {
            out.add(gguf(headers, model, "", budget));
        }
        Layer draft = m.first(MediaType.Kind.DRAFT);
        if (draft != null && draft.digest().isPresent()) {
            out.add(gguf(headers, draft, DRAFT_FOLDER, budget));
        }
        if (m.first(MediaType.Kind.TENSOR) != null) {
            ComponentConfigs configs = ComponentConfigs.read(store, m);
            TensorTable table = new TensorTableBuilder(headers::safetensors, configs::quantSection, config.fileType(),
                    configs.imageQuantization(), DraftLayout.of(config, m).orElse(null)).build(m);
            try {
                budget.reserveTensors(table.tensors().size());
            } catch (MemoryBudget.OverBudget e) {
                table = new TensorTable(List.of(), java.util.Set.of(), List.of(table.tensors().size() + " tensors: " + e.getMessage()));
            }
            out.add(new ModelTable.Safetensors(table, configs));
        }
        return out;
    }

    private static ModelTable gguf(BlobHeaders headers, Layer layer, String folder, MemoryBudget.Account budget) {
        try {
            budget.reserveTensors(headers.ggufTensorCount(layer.digest().get(), layer.size()));   // before parsing anything
            GgufFile g = headers.gguf(layer.digest().get(), layer.size(), budget.asCharge("GGUF metadata"));
            return new ModelTable.Gguf(layer, g, folder);
        } catch (IOException | FormatException | MemoryBudget.OverBudget e) {
            return new ModelTable.UnreadableGguf(layer, e.getMessage(), folder);
        }
    }
}
