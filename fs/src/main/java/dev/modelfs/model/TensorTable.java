package dev.modelfs.model;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The logical tensors of one safetensors-based model, grouped by component.
 *
 * <p>Invariants: tensor names are unique; {@code disabledComponents} names components for which at
 * least one blob could not be read or validated: views must not build converted files for them,
 * because the component would be incomplete; {@code problems} holds one line per such failure.
 */
public record TensorTable(List<LogicalTensor> tensors, Set<String> disabledComponents, List<String> problems) {
    public TensorTable {
        tensors = List.copyOf(tensors);
        disabledComponents = Set.copyOf(disabledComponents);
        problems = List.copyOf(problems);
    }

    /** Tensors per component, in table order; disabled components left out. */
    public Map<String, List<LogicalTensor>> byComponent() {
        Map<String, List<LogicalTensor>> out = new LinkedHashMap<>();
        for (LogicalTensor t : tensors) {
            if (!disabledComponents.contains(t.component())) {
                out.computeIfAbsent(t.component(), k -> new ArrayList<>()).add(t);
            }
        }
        return out;
    }
}
