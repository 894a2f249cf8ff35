package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;

/** The header tests Ollama's detectors use ({@code has_key}, {@code string_kv_equals}, {@code token_at_equals} ...), over a {@link GgufFile}. */
final class Markers {
    private Markers() {}

    static boolean has(GgufFile g, String key) {
        return g.kv(key) != null;
    }

    static boolean stringEquals(GgufFile g, String key, String want) {
        GgufKv kv = g.kv(key);
        return kv != null && kv.type() == GgufValueType.STRING && want.equals(kv.value());
    }

    static boolean stringContains(GgufFile g, String key, String needle) {
        GgufKv kv = g.kv(key);
        return kv != null && kv.type() == GgufValueType.STRING && ((String) kv.value()).contains(needle);
    }

    /** {@code string_kv_missing_or_default}: absent, or a string that is empty or {@code "default"}. */
    static boolean stringMissingOrDefault(GgufFile g, String key) {
        GgufKv kv = g.kv(key);
        return kv == null || (kv.type() == GgufValueType.STRING && (kv.value().equals("") || kv.value().equals("default")));
    }

    static boolean architecture(GgufFile g, String arch) {
        return stringEquals(g, "general.architecture", arch);
    }

    static boolean anyTensorWithPrefix(GgufFile g, String prefix) {
        for (GgufTensorInfo t : g.tensors()) {
            if (t.name().startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /** {@code token_at_equals}: {@code tokenizer.ggml.tokens[idx]} is {@code want}. */
    static boolean tokenAt(GgufFile g, int idx, String want) {
        GgufKv kv = g.kv("tokenizer.ggml.tokens");
        return kv != null && kv.value() instanceof GgufArray a && a.elementType() == GgufValueType.STRING
                && idx < a.size() && want.equals(a.values().get(idx));
    }

    /** {@code get_u32_kv}: a UINT32, or a non-negative INT32, as a long; -1 when absent or of another type. */
    static long u32(GgufFile g, String key) {
        GgufKv kv = g.kv(key);
        if (kv == null) {
            return -1;
        }
        return switch (kv.type()) {
            case UINT32 -> Integer.toUnsignedLong((Integer) kv.value());
            case INT32 -> Math.max(-1, (Integer) kv.value());
            default -> -1;
        };
    }
}
