package dev.modelfs.format.safetensors;

import dev.modelfs.format.FormatException;

import java.util.AbstractList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.RandomAccess;

/**
 * Immutable list of tensors in a fixed order with a by-name index. Invariant: names are unique.
 * Lets {@link SafetensorsHeader} (a record, which cannot hold extra fields) answer {@code get(name)}
 * in O(1).
 */
final class TensorList extends AbstractList<TensorEntry> implements RandomAccess {
    private final TensorEntry[] items;
    private final Map<String, TensorEntry> byName;

    private TensorList(List<TensorEntry> tensors) {
        this.items = tensors.toArray(new TensorEntry[0]);
        this.byName = HashMap.newHashMap(items.length);
        for (TensorEntry t : items) {
            if (t == null) {
                throw new NullPointerException("null tensor entry");
            }
            if (byName.putIfAbsent(t.name(), t) != null) {
                throw new FormatException("duplicate tensor name " + Names.quote(t.name()));
            }
        }
    }

    static TensorList of(List<TensorEntry> tensors) {
        return tensors instanceof TensorList l ? l : new TensorList(tensors);
    }

    TensorEntry byName(String name) {
        return byName.get(name);
    }

    @Override
    public TensorEntry get(int index) {
        return items[index];
    }

    @Override
    public int size() {
        return items.length;
    }
}
