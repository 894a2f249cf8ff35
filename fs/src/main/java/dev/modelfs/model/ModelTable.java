package dev.modelfs.model;

import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.store.Layer;

/**
 * What the model stage read from one model's tensor-bearing layers: the closed family the views and
 * the CLI receive from {@link ModelTables#load}.
 */
public sealed interface ModelTable {

    /**
     * A GGUF model layer and its parsed header (KVs and tensor infos; tensor offsets are relative to
     * {@link GgufFile#dataStart()} inside the layer's blob), and the folder of the model directory its
     * files go to: {@code ""} for the model layer, {@code "draft"} for a draft layer (docs/FORMATS.md §4.3 H).
     *
     * <p>Invariant: {@code layer} has a digest, and {@code file} was parsed from a blob of {@code layer.size()} bytes.
     */
    record Gguf(Layer layer, GgufFile file, String folder) implements ModelTable {}

    /**
     * The logical tensors of a safetensors-based model (all its tensor layers) and the component
     * config.json files they were resolved with; per-blob failures are in {@link TensorTable#problems()}.
     */
    record Safetensors(TensorTable table, ComponentConfigs configs) implements ModelTable {}

    /** A GGUF model (or draft) layer whose header could not be read or parsed; {@code reason} is one log line. */
    record UnreadableGguf(Layer layer, String reason, String folder) implements ModelTable {}
}
