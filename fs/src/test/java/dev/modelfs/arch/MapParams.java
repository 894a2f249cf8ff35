package dev.modelfs.arch;

import java.util.Map;
import java.util.Set;

/**
 * GGUF metadata for the mapping tests, from a map (integers as {@code Long}, floats as {@code Double}, strings,
 * booleans as {@code Boolean}, bool arrays as {@code boolean[]}, integer arrays as {@code int[]}, small F32 vectors as {@code float[]} under their tensor's
 * name) and a set of tensor names; a KV of another type than asked throws, as
 * {@code GgufMeta} does.
 */
record MapParams(Map<String, ?> kvs, Set<String> tensors) implements GgufParams {
    MapParams(Map<String, ?> kvs) {
        this(kvs, Set.of());
    }

    @Override
    public Long integer(String key, Long dflt) {
        return get(key, Long.class, dflt);
    }

    @Override
    public Double real(String key, Double dflt) {
        return get(key, Double.class, dflt);
    }

    @Override
    public String string(String key, String dflt) {
        return get(key, String.class, dflt);
    }

    @Override
    public Boolean bool(String key, Boolean dflt) {
        return get(key, Boolean.class, dflt);
    }

    @Override
    public boolean[] bools(String key) {
        return get(key, boolean[].class, null);
    }

    @Override
    public int[] ints(String key) {
        return get(key, int[].class, null);
    }

    @Override
    public boolean isArray(String key) {
        Object v = kvs.get(key);
        return v != null && v.getClass().isArray();
    }

    @Override
    public boolean hasTensor(String name) {
        return tensors.contains(name);
    }

    /** A {@code float[]} under the tensor's name in the map (read from the blob in the real folder). */
    @Override
    public float[] f32Vector(String name) {
        return get(name, float[].class, null);
    }

    private <T> T get(String key, Class<T> type, T dflt) {
        Object v = kvs.get(key);
        if (v == null) {
            return dflt;
        }
        if (!type.isInstance(v)) {
            throw new IllegalArgumentException(key + ": " + v.getClass().getSimpleName() + ", not " + type.getSimpleName());
        }
        return type.cast(v);
    }
}
