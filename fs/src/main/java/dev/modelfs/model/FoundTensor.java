package dev.modelfs.model;

import dev.modelfs.store.Layer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One main entry found in a tensor blob while a {@link TensorTable} is built, with the companions
 * attached so far, before its quantization is resolved (docs/FORMATS.md §4.8 steps 3–5).
 *
 * <p>Invariants: {@code key} is the entry's key in its blob ({@code "data"} for a legacy blob, then
 * {@code legacyData}); {@code logicalName} is the name it will have in the table; {@code metadata}
 * is the blob's {@code __metadata__} (may be null); {@code bias} and {@code globalScale} are null
 * when {@code scale} is.
 */
record FoundTensor(String logicalName, Layer layer, String key, StoredTensor main, StoredTensor scale,
                   StoredTensor bias, StoredTensor globalScale, Map<String, String> metadata, boolean legacyData) {

    /** The same entry with other stored pieces (companions attached, or relabelled codes). */
    FoundTensor with(StoredTensor newMain, StoredTensor s, StoredTensor b, StoredTensor g) {
        return new FoundTensor(logicalName, layer, key, newMain, s, b, g, metadata, legacyData);
    }

    /** Removes the entries at {@code indices} (companions now attached to another entry), keeping the order. */
    static void removeAll(List<FoundTensor> found, Set<Integer> indices) {
        List<FoundTensor> kept = new ArrayList<>(found.size());
        for (int i = 0; i < found.size(); i++) {
            if (!indices.contains(i)) {
                kept.add(found.get(i));
            }
        }
        found.clear();
        found.addAll(kept);
    }
}
