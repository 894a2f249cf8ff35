package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;

/**
 * GLM-4.7-Flash (and the other GLM-4.x-Flash models) as Ollama's converter writes it ({@code convert/convert_glm4moelite.go}):
 * Ollama's {@code detect_ollama_glm4moelite} / {@code handle_glm4moelite} (docs/FORMATS.md §12.14). The tensors already
 * are llama.cpp's {@code deepseek2} ones (MLA with {@code attn_k_b} / {@code attn_v_b}); only the key semantics differ:
 * the converter wrote per-head key/value lengths where llama.cpp's {@code deepseek2} loader reads the MLA-absorbed ones
 * (and the per-head ones under {@code *_mla}). Edits, in Ollama's order: architecture {@code deepseek2}; every
 * {@code glm4moelite.*} key copied to {@code deepseek2.*}; {@code head_count_kv = 1}; {@code key_length =
 * kv_lora_rank + rope.dimension_count}, {@code value_length = kv_lora_rank}; {@code key_length_mla} and
 * {@code value_length_mla} the per-head lengths the converter wrote; {@code expert_group_count} and
 * {@code expert_group_used_count} 1 when missing; {@code tokenizer.ggml.pre = glm4}; the end-of-turn and end-of-message
 * ids taken from {@code tokenizer.ggml.eos_token_ids} (its 2nd and 3rd entries) when missing
 * ({@code fix_glm4moelite_eog_token_ids}).
 *
 * <p>One difference from Ollama's layer: {@code value_length_mla} is the converter's {@code glm4moelite.attention.value_length}
 * ({@code v_head_dim}) where Ollama reuses {@code key_length}; the two are equal in every published file (GLM-4.7-Flash:
 * 256), and the value length is what llama.cpp's converter writes there.
 */
public record Glm4MoeLite() implements DialectHandler {
    private static final String SRC = "glm4moelite.";
    private static final String DST = "deepseek2.";

    @Override
    public String name() {
        return "glm4moelite";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    /** {@code detect_ollama_glm4moelite}: the architecture (llama.cpp has none of that name). */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, "glm4moelite");
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.renameArchitecture("glm4moelite", "deepseek2");
        e.set(DST + "attention.head_count_kv", GgufValueType.UINT32, 1);
        long kvLora = u32(g, SRC + "attention.kv_lora_rank");
        long ropeDim = u32(g, SRC + "rope.dimension_count");
        if (kvLora >= 0 && ropeDim >= 0) {
            e.set(DST + "attention.key_length", GgufValueType.UINT32, (int) (kvLora + ropeDim));
            e.set(DST + "attention.value_length", GgufValueType.UINT32, (int) kvLora);
        }
        long headDim = u32(g, SRC + "attention.key_length");
        if (headDim >= 0) {
            long vHeadDim = u32(g, SRC + "attention.value_length");
            e.set(DST + "attention.key_length_mla", GgufValueType.UINT32, (int) headDim);
            e.set(DST + "attention.value_length_mla", GgufValueType.UINT32, (int) (vHeadDim >= 0 ? vHeadDim : headDim));
        }
        e.inject(DST + "expert_group_count", GgufValueType.UINT32, 1);
        e.inject(DST + "expert_group_used_count", GgufValueType.UINT32, 1);
        e.set("tokenizer.ggml.pre", GgufValueType.STRING, "glm4");
        endOfGeneration(g, e);
        return e.build(name(), face());
    }

    /** {@code fix_glm4moelite_eog_token_ids}: eot = {@code eos_token_ids[1]}, eom = {@code [2]}, each only when missing. */
    private static void endOfGeneration(GgufFile g, HeaderEdit e) {
        boolean needEot = !e.has("tokenizer.ggml.eot_token_id");
        boolean needEom = !e.has("tokenizer.ggml.eom_token_id");
        GgufKv kv = g.kv("tokenizer.ggml.eos_token_ids");
        if (!needEot && !needEom || kv == null || !(kv.value() instanceof GgufArray a)) {
            return;
        }
        List<Integer> ids = new ArrayList<>();
        if (a.elementType() == GgufValueType.INT32) {
            for (Object v : a.values()) {
                if ((Integer) v >= 0) {
                    ids.add((Integer) v);
                }
            }
        } else if (a.elementType() == GgufValueType.UINT32) {
            for (Object v : a.values()) {
                ids.add((Integer) v);
            }
        }
        if (needEot && ids.size() >= 2) {
            e.set("tokenizer.ggml.eot_token_id", GgufValueType.UINT32, ids.get(1));
        }
        if (needEom && ids.size() >= 3) {
            e.set("tokenizer.ggml.eom_token_id", GgufValueType.UINT32, ids.get(2));
        }
    }

    /** A UINT32 key as a long, -1 when absent; another type is refused ({@code gguf_get_val_u32} asserts the type). */
    private static long u32(GgufFile g, String key) {
        GgufKv kv = g.kv(key);
        if (kv == null) {
            return -1;
        }
        if (kv.type() != GgufValueType.UINT32) {
            throw new FormatException(key + " is " + kv.type() + ", not UINT32");
        }
        return Integer.toUnsignedLong((Integer) kv.value());
    }
}
