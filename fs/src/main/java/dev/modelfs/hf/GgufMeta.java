package dev.modelfs.hf;

import dev.modelfs.arch.GgufParams;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;
import java.util.Map;

/**
 * Typed, lenient reads of GGUF metadata for the Hugging Face files: a KV of an unexpected type is
 * an {@link HfUnsupported}, never a crash.
 */
final class GgufMeta implements GgufParams {
    private final GgufFile g;
    private final Map<String, float[]> vectors;

    /** The metadata of {@code g} (no vectors). */
    GgufMeta(GgufFile g) {
        this(g, Map.of());
    }

    /** The metadata of {@code g} and the values of its small F32 vectors ({@link HfFolder#VECTORS}) read from the blob. */
    GgufMeta(GgufFile g, Map<String, float[]> vectors) {
        this.g = g;
        this.vectors = vectors;
    }

    @Override
    public float[] f32Vector(String name) {
        float[] v = vectors.get(name);
        return v == null ? null : v.clone();
    }

    boolean has(String key) {
        return g.kv(key) != null;
    }

    @Override
    public boolean hasTensor(String name) {
        return g.tensor(name) != null;
    }

    @Override
    public long[] ne(String name) {
        var t = g.tensor(name);
        return t == null ? null : t.ne().clone();
    }

    @Override
    public String string(String key, String dflt) {
        GgufKv kv = g.kv(key);
        if (kv == null) {
            return dflt;
        }
        if (kv.type() != GgufValueType.STRING) {
            throw new HfUnsupported(key + " is " + kv.type() + ", not STRING");
        }
        return (String) kv.value();
    }

    /** An integer KV (any integer width), or {@code dflt}. */
    @Override
    public Long integer(String key, Long dflt) {
        GgufKv kv = g.kv(key);
        if (kv == null) {
            return dflt;
        }
        return switch (kv.type()) {
            case UINT8, INT8, UINT16, INT16, UINT32, INT32, UINT64, INT64 -> kv.asLong();
            default -> throw new HfUnsupported(key + " is " + kv.type() + ", not an integer");
        };
    }

    /** A FLOAT32/FLOAT64 KV as a double, or {@code dflt}. */
    @Override
    public Double real(String key, Double dflt) {
        GgufKv kv = g.kv(key);
        if (kv == null) {
            return dflt;
        }
        return switch (kv.type()) {
            case FLOAT32 -> (double) (Float) kv.value();
            case FLOAT64 -> (Double) kv.value();
            default -> throw new HfUnsupported(key + " is " + kv.type() + ", not a float");
        };
    }

    @Override
    public Boolean bool(String key, Boolean dflt) {
        GgufKv kv = g.kv(key);
        if (kv == null) {
            return dflt;
        }
        if (kv.type() != GgufValueType.BOOL) {
            throw new HfUnsupported(key + " is " + kv.type() + ", not BOOL");
        }
        return (Boolean) kv.value();
    }

    /** An ARRAY KV whose elements are {@code element}, or null when absent. */
    List<Object> array(String key, GgufValueType element) {
        GgufKv kv = g.kv(key);
        if (kv == null) {
            return null;
        }
        if (kv.type() != GgufValueType.ARRAY || ((GgufArray) kv.value()).elementType() != element) {
            throw new HfUnsupported(key + " is not an ARRAY of " + element);
        }
        return ((GgufArray) kv.value()).values();
    }

    @Override
    public boolean[] bools(String key) {
        List<Object> a = array(key, GgufValueType.BOOL);
        if (a == null) {
            return null;
        }
        boolean[] out = new boolean[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = (Boolean) a.get(i);
        }
        return out;
    }

    /** An ARRAY of any integer type as ints, or null when absent. */
    @Override
    public int[] ints(String key) {
        GgufKv kv = g.kv(key);
        if (kv == null) {
            return null;
        }
        if (kv.type() != GgufValueType.ARRAY) {
            throw new HfUnsupported(key + " is not an ARRAY");
        }
        GgufArray a = (GgufArray) kv.value();
        int[] out = new int[a.size()];
        for (int i = 0; i < out.length; i++) {
            if (!(a.values().get(i) instanceof Number n) || a.elementType() == GgufValueType.FLOAT32
                    || a.elementType() == GgufValueType.FLOAT64) {
                throw new HfUnsupported(key + " is not an ARRAY of integers");
            }
            out[i] = n.intValue();
        }
        return out;
    }
}
