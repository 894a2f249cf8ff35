package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Gemma 4's full-attention layers in the larger models (26B-A4B, 31B), both directions (docs/FORMATS.md §7.3, §7.5):
 * <ul>
 * <li><b>keys shared with values</b> ({@code attention_k_eq_v}): a full layer has no {@code v_proj} ↔ no {@code attn_v};
 * transformers' {@code Gemma4TextAttention} and llama.cpp's {@code gemma4.cpp} both take V as the raw {@code k_proj} output
 * (before {@code k_norm} and rope; V then gets the weightless v norm). The sliding layers keep their {@code v_proj}.</li>
 * <li><b>their own KV-head count</b> ({@code num_global_key_value_heads}, or {@code per_layer_config}'s
 * {@code num_key_value_heads} of the first full layer): llama.cpp's converter then writes {@code attention.head_count_kv}
 * as an INT32 array, per layer the sliding count ({@code num_key_value_heads}) or the full one; without either field, a
 * UINT32 scalar. transformers applies {@code num_global_key_value_heads} only with {@code attention_k_eq_v}: a model where it
 * would differ from what the converter writes is refused.</li>
 * </ul>
 * Stateless; refusals throw {@link IllegalArgumentException} with a one-line reason.
 */
final class Gemma4KvHeads {
    private Gemma4KvHeads() {
    }

    static final String KV = "attention.head_count_kv";

    // ---- Hugging Face → GGUF

    /** The full layers' KV-head count as llama.cpp's converter reads it, empty when it reads none (then the scalar is written). */
    static Optional<Integer> fullKv(JsonNode c) {
        JsonNode g = c.get("num_global_key_value_heads");
        if (g != null && !g.isNull()) {
            return Optional.of(g.asInt());
        }
        JsonNode types = c.path("layer_types");
        for (Iterator<Map.Entry<String, JsonNode>> it = c.path("per_layer_config").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getKey().matches("\\d{1,9}")) {
                throw new IllegalArgumentException("gemma4 per_layer_config key " + e.getKey() + " is not a layer index");
            }
            int i = Integer.parseInt(e.getKey());
            if (i < types.size() && types.get(i).asText().equals("full_attention") && e.getValue().has("num_key_value_heads")) {
                return Optional.of(e.getValue().get("num_key_value_heads").asInt());
            }
        }
        return Optional.empty();
    }

    private static int slidingKv(JsonNode c) {
        return c.path("num_key_value_heads").asInt(c.path("num_attention_heads").asInt());
    }

    /** Layer {@code i}'s KV-head count as transformers' {@code Gemma4TextConfig} builds it. */
    private static int transformersKv(JsonNode c, int i) {
        JsonNode plc = c.get("per_layer_config");
        if (plc != null && plc.isObject()) {
            JsonNode n = plc.path(Integer.toString(i)).get("num_key_value_heads");
            return n != null && n.isIntegralNumber() ? n.asInt() : slidingKv(c);
        }
        JsonNode g = c.get("num_global_key_value_heads");
        boolean full = !Gemma4Synth.sliding(c, i);
        return full && c.path("attention_k_eq_v").asBoolean(false) && g != null && !g.isNull() ? g.asInt() : slidingKv(c);
    }

    /** Layer {@code i}'s KV-head count in the converter's GGUF. */
    static int kv(JsonNode c, int i) {
        return Gemma4Synth.sliding(c, i) ? slidingKv(c) : fullKv(c).orElse(slidingKv(c));
    }

    /** Refuses KV-head counts that the converter and transformers read differently, or that are not positive. */
    static void checkHfConfig(JsonNode c) {
        int layers = c.path("layer_types").size();
        for (int i = 0; i < layers; i++) {
            if (kv(c, i) <= 0 || kv(c, i) != transformersKv(c, i)) {
                throw new IllegalArgumentException("gemma4 layer " + i + " has " + transformersKv(c, i) + " KV heads in transformers and "
                        + kv(c, i) + " in llama.cpp's converter (transformers reads num_global_key_value_heads only with attention_k_eq_v and no per_layer_config)");
            }
        }
    }

    /** {@code attention.head_count_kv} as an INT32 array per layer when the converter writes one, else nothing (the scalar stays). */
    static List<GgufKv> extraKvs(JsonNode c, String p, int layers) {
        if (fullKv(c).isEmpty()) {
            return List.of();
        }
        List<Object> counts = new ArrayList<>();
        for (int i = 0; i < layers; i++) {
            counts.add(kv(c, i));
        }
        return List.of(new GgufKv(p + KV, GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, counts), 0, 0));
    }

    /** Whether llama.cpp requires {@code blk.<layer>.attn_v.weight}: not on a full layer whose keys are its values. */
    static boolean requiresV(int layer, JsonNode c) {
        return Gemma4Synth.sliding(c, layer) || !c.path("attention_k_eq_v").asBoolean(false);
    }

    // ---- GGUF → Hugging Face

    /**
     * {sliding count, full count} from {@code attention.head_count_kv}: a scalar for both, or an array of one entry a layer,
     * equal over the sliding layers and over the full ones.
     */
    static int[] counts(GgufParams m, String p, boolean[] sliding) {
        long heads = m.integer(p + "attention.head_count", 0L);
        if (!m.isArray(p + KV)) {
            int n = (int) (long) m.integer(p + KV, heads);
            return new int[] {n, n};
        }
        int[] a = m.ints(p + KV);
        if (a == null || a.length != sliding.length) {
            throw new IllegalArgumentException("gemma4 " + p + KV + " is an array of " + (a == null ? 0 : a.length) + " entries for "
                    + sliding.length + " layers");
        }
        int[] out = {-1, -1};
        for (int i = 0; i < a.length; i++) {
            int k = sliding[i] ? 0 : 1;
            if (a[i] <= 0 || (out[k] >= 0 && out[k] != a[i])) {
                throw new IllegalArgumentException("gemma4 " + p + KV + " other than one count for the sliding layers and one for the full"
                        + " layers is not mapped");
            }
            out[k] = a[i];
        }
        out[0] = out[0] < 0 ? out[1] : out[0];
        out[1] = out[1] < 0 ? out[0] : out[1];
        return out;
    }

    /**
     * Whether the full layers share keys with values: every full layer with keys of its own lacks {@code attn_v} (true) or
     * has it (false); a mix, or a sliding layer without {@code attn_v}, is refused.
     */
    static boolean kEqV(GgufParams m, String p, boolean[] sliding) {
        Boolean shared = null;
        for (int i = 0; i < sliding.length; i++) {
            if (Gemma4PerLayer.sharesKv(m, p, i)) {
                continue;
            }
            boolean hasV = m.hasTensor("blk." + i + ".attn_v.weight");
            if (sliding[i] && !hasV) {
                throw new IllegalArgumentException("gemma4 sliding layer " + i + " has no attn_v");
            }
            if (!sliding[i]) {
                if (shared != null && shared == hasV) {
                    throw new IllegalArgumentException("gemma4 full-attention layers with and without attn_v");
                }
                shared = !hasV;
            }
        }
        return shared != null && shared;
    }

    static void checkGguf(GgufParams m, String p, boolean[] sliding) {
        int[] n = counts(m, p, sliding);
        if (!kEqV(m, p, sliding) && n[0] != n[1]) {
            throw new IllegalArgumentException("gemma4 full layers with " + n[1] + " KV heads and the sliding ones with " + n[0]
                    + ", values of their own (transformers reads num_global_key_value_heads only with attention_k_eq_v)");
        }
    }

    /** {@code num_key_value_heads} (the sliding layers'), {@code attention_k_eq_v}, and with it {@code num_global_key_value_heads}. */
    static void completeHfConfig(ObjectNode c, GgufParams m, String p, boolean[] sliding) {
        int[] n = counts(m, p, sliding);
        boolean shared = kEqV(m, p, sliding);
        c.put("num_key_value_heads", n[0]);
        c.put("attention_k_eq_v", shared);
        if (shared) {
            c.put("num_global_key_value_heads", n[1]);
        }
    }
}
