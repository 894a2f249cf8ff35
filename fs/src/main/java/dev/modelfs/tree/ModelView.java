package dev.modelfs.tree;

import dev.modelfs.model.ModelTable;
import java.util.List;

/**
 * A family of synthesized files added to a model directory (converted safetensors, GGUF variants ...).
 * Implementations receive the model's tensor tables from the model stage ({@link
 * dev.modelfs.model.ModelTables#load}), read nothing else while building (except small JSON layers
 * and, for the synthesized GGUF ({@code view.synth.SynthesizedGgufView}), the scales of int4 tensors; docs/DESIGN.md §2.4), and must
 * leave the tree unchanged for models they do not apply to.
 */
public interface ModelView {
    void addTo(ModelContext ctx, List<ModelTable> tables, TreeBuilder tree);
}
