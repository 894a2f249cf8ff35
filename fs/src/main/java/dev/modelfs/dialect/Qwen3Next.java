package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * Qwen3-Next as Ollama's converter writes it: Ollama's {@code detect_ollama_qwen3next} / {@code handle_qwen3next}
 * (docs/FORMATS.md §12.6). Marker: tensors named {@code *.ssm_dt} (llama.cpp reads {@code *.ssm_dt.bias}); the
 * per-layer {@code head_count_kv} array collapsed to its maximum (the hybrid layers' 0 entries), the tensors renamed.
 */
public record Qwen3Next() implements DialectHandler {
    private static final String KV_HEADS = "qwen3next.attention.head_count_kv";

    @Override
    public String name() {
        return "qwen3next";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, "qwen3next") && g.tensors().stream().anyMatch(t -> t.name().endsWith(".ssm_dt"));
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        GgufKv heads = g.kv(KV_HEADS);
        if (heads != null && heads.value() instanceof GgufArray a) {
            if (a.elementType() != GgufValueType.UINT32 && a.elementType() != GgufValueType.INT32) {
                throw new FormatException(KV_HEADS + " is an array of " + a.elementType());
            }
            long max = 0;
            for (Object v : a.values()) {
                max = Math.max(max, Integer.toUnsignedLong((Integer) v));
            }
            if (max > 0) {
                e.remove(KV_HEADS);
                e.set(KV_HEADS, GgufValueType.UINT32, (int) max);
            }
        }
        for (GgufTensorInfo t : g.tensors()) {
            if (t.name().endsWith(".ssm_dt")) {
                e.rename(t.name(), t.name() + ".bias");
            }
        }
        return e.build(name(), face());
    }
}
