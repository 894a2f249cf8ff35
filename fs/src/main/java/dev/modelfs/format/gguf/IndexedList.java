package dev.modelfs.format.gguf;

import dev.modelfs.format.FormatException;

import java.util.AbstractList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.RandomAccess;
import java.util.function.Function;

/**
 * Immutable, null-free list in a fixed order with an index by a unique string key. Lets the
 * {@link GgufFile} record (which cannot hold extra fields) answer lookups in O(1).
 */
final class IndexedList<T> extends AbstractList<T> implements RandomAccess {
    private final Object[] items;
    private final Map<String, T> byKey;

    IndexedList(List<? extends T> list, Function<T, String> key, String what) {
        this.items = list.toArray();
        this.byKey = HashMap.newHashMap(items.length);
        for (Object o : items) {
            if (o == null) {
                throw new NullPointerException("null " + what);
            }
            @SuppressWarnings("unchecked") T t = (T) o;
            String k = key.apply(t);
            if (byKey.putIfAbsent(k, t) != null) {
                throw new FormatException("duplicate " + what + " " + GgufText.quote(k));
            }
        }
    }

    T byKey(String key) {
        return byKey.get(key);
    }

    @Override
    @SuppressWarnings("unchecked")
    public T get(int index) {
        return (T) items[index];
    }

    @Override
    public int size() {
        return items.length;
    }
}
