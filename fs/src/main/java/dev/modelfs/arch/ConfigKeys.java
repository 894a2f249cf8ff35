package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * HF {@code config.json} fields ↔ GGUF architecture metadata ({@code <arch>.<suffix>}) with the exact
 * GGUF value types llama.cpp's loader requires (docs/FORMATS.md §7.4; the key set and the field
 * aliases follow llama.cpp's {@code convert_hf_to_gguf.py} {@code TextModel.set_gguf_parameters}).
 *
 * <p>Invariants: {@link #entries} has unique GGUF suffixes; every entry's type is UINT32, FLOAT32 or
 * STRING; the first HF field of an entry is the one written in the GGUF → HF direction, the others are
 * aliases accepted when reading (transformers 5 moved {@code rope_theta} into {@code rope_parameters}
 * and renamed {@code num_experts} to {@code num_local_experts}). {@link #toGguf} either returns every
 * required key or throws; it never returns two KVs with the same key. UINT32 values are integers in
 * {@code [0, 2^31)} as written in the JSON (a fraction, a negative or a string is an error); FLOAT32
 * values are the JSON number rounded once to f32 (as gguf-py does with {@code np.float32}).
 */
public final class ConfigKeys {

    private ConfigKeys() {
    }

    /** One mapping: GGUF {@code <arch>.<ggufSuffix>} ↔ the first present of {@code hfFields}. */
    public record Entry(String ggufSuffix, GgufValueType type, List<String> hfFields, boolean required) {
    }

    /** The field mappings every architecture has, in the order written; {@link ArchSpec#configEntries} go after the norm epsilon. */
    public static final List<Entry> COMMON = List.of(
            new Entry("context_length", GgufValueType.UINT32, List.of("max_position_embeddings"), true),
            new Entry("embedding_length", GgufValueType.UINT32, List.of("hidden_size"), true),
            new Entry("block_count", GgufValueType.UINT32, List.of("num_hidden_layers"), true),
            new Entry("feed_forward_length", GgufValueType.UINT32, List.of("intermediate_size"), true),
            new Entry("attention.head_count", GgufValueType.UINT32, List.of("num_attention_heads"), true),
            new Entry("attention.head_count_kv", GgufValueType.UINT32, List.of("num_key_value_heads"), false),
            new Entry("rope.freq_base", GgufValueType.FLOAT32, List.of("rope_theta", "rope_parameters.rope_theta", "rope_parameters.full_attention.rope_theta"), false),
            new Entry("attention.layer_norm_rms_epsilon", GgufValueType.FLOAT32, List.of("rms_norm_eps"), true),
            new Entry("attention.key_length", GgufValueType.UINT32, List.of("head_dim"), false),
            new Entry("attention.value_length", GgufValueType.UINT32, List.of("head_dim"), false),
            new Entry("vocab_size", GgufValueType.UINT32, List.of("vocab_size"), true));
    private static final int ARCH_ENTRIES_AT = 8;

    /** The entries of architecture {@code a}: {@link #COMMON} with the architecture's own after the norm epsilon. */
    public static List<Entry> entries(Architecture a) {
        List<Entry> out = new ArrayList<>(COMMON.subList(0, ARCH_ENTRIES_AT));
        out.addAll(a.spec().configEntries());
        out.addAll(COMMON.subList(ARCH_ENTRIES_AT, COMMON.size()));
        return out;
    }

    /** The hyper-parameters a view needs besides the KVs (all validated positive). */
    public record Dims(int hidden, int layers, int heads, int headsKv, int headDim, int vocab, int ff, int experts, int expertFf,
                       int sharedFf) {
    }

    /**
     * The GGUF architecture KVs for {@code config} ({@code general.architecture} first, then the
     * {@link #entries} in order, then the architecture's {@link ArchSpec#extraKvs} (one with the key of an entry
     * replaces it in place: Gemma 4's {@code attention.key_length} is the full-attention layers' head dimension),
     * then rope scaling).
     *
     * @throws IllegalArgumentException for a missing required field or a value of the wrong kind
     */
    public static List<GgufKv> toGguf(Architecture a, JsonNode config) {
        List<GgufKv> out = new ArrayList<>();
        out.add(kv("general.architecture", GgufValueType.STRING, a.ggufName()));
        String p = a.ggufName() + ".";
        for (Entry e : entries(a)) {
            Optional<JsonNode> v = field(config, e.hfFields());
            if (v.isEmpty() && e.ggufSuffix().equals("attention.head_count_kv")) {
                v = field(config, List.of("num_attention_heads"));
            }
            if (v.isEmpty() && e.ggufSuffix().equals("feed_forward_length") && a.spec().experts().isPresent()) {
                continue;   // a model whose every layer is sparse (Qwen 3.5 MoE): no dense feed-forward length, as the converter writes none
            }
            if (v.isEmpty()) {
                if (e.required()) {
                    throw new IllegalArgumentException("config.json has no " + e.hfFields().getFirst());
                }
                continue;
            }
            out.add(kv(p + e.ggufSuffix(), e.type(), value(e, v.get())));
        }
        for (GgufKv extra : a.spec().extraKvs(config, p, out, dims(a, config))) {   // an extra KV of a written key replaces it
            int at = indexOf(out, extra.key());
            if (at >= 0) {
                out.set(at, extra);
            } else {
                out.add(extra);
            }
        }
        ropeScaling(config).ifPresent(r -> {
            switch (r.type()) {
                case "linear" -> {
                    out.add(kv(p + "rope.scaling.type", GgufValueType.STRING, "linear"));
                    out.add(kv(p + "rope.scaling.factor", GgufValueType.FLOAT32, r.factor()));
                }
                case "yarn" -> {
                    out.add(kv(p + "rope.scaling.type", GgufValueType.STRING, "yarn"));
                    out.add(kv(p + "rope.scaling.factor", GgufValueType.FLOAT32, r.factor()));
                    out.add(kv(p + "rope.scaling.original_context_length", GgufValueType.UINT32,
                            r.originalContext().orElseThrow(() -> new IllegalArgumentException(
                                    "yarn rope scaling without original_max_position_embeddings"))));
                }
                case "llama3", "default" -> {
                    // llama3: a rope_freqs tensor instead of KVs (RopeFreqs); default: nothing
                }
                default -> {
                    if (!a.spec().writesRopeScaling(r.type())) {
                        throw new IllegalArgumentException("rope scaling type " + r.type() + " is not supported");
                    }
                }
            }
        });
        return List.copyOf(out);
    }

    /** The dimensions of {@code config}, validated (every value positive, heads divide sizes). */
    public static Dims dims(Architecture a, JsonNode config) {
        a.spec().checkHfConfig(config);
        int hidden = positive(config, "hidden_size");
        int layers = positive(config, "num_hidden_layers");
        int heads = positive(config, "num_attention_heads");
        int headsKv = field(config, List.of("num_key_value_heads")).isPresent() ? positive(config, "num_key_value_heads") : heads;
        int headDim = field(config, List.of("head_dim")).isPresent() ? positive(config, "head_dim") : hidden / heads;
        int vocab = positive(config, "vocab_size");
        Optional<Experts> moe = a.spec().experts();
        int experts = moe.isPresent() ? field(config, List.of("num_experts", "num_local_experts"))
                .map(v -> intValue("num_experts", v)).orElseThrow(() -> new IllegalArgumentException("config.json has no num_experts")) : 0;
        if (headDim <= 0 || headDim % 2 != 0 || heads % headsKv != 0) {
            throw new IllegalArgumentException("config.json: " + heads + " heads, " + headsKv + " kv heads, head_dim " + headDim);
        }
        int ff = moe.isPresent() && field(config, List.of("intermediate_size")).isEmpty() ? 0 : positive(config, "intermediate_size");
        int expertFf = moe.isPresent() ? positive(config, moe.get().ffField()) : 0;
        int sharedFf = moe.isPresent() && moe.get().sharedFfField() != null ? positive(config, moe.get().sharedFfField()) : 0;
        return new Dims(hidden, layers, heads, headsKv, headDim, vocab, ff, experts, expertFf, sharedFf);
    }

    /** Rope scaling of a config: {@code rope_scaling}, else {@code rope_parameters} (transformers 5). */
    public record RopeScaling(String type, float factor, Optional<Integer> originalContext, float lowFreqFactor,
                              float highFreqFactor) {
    }

    /**
     * The rope scaling section, if it names a type ({@code rope_type}, or legacy {@code type}); of per-layer-type
     * {@code rope_parameters} (Gemma 3 in transformers 5), the {@code full_attention} one, as llama.cpp's converter reads it.
     */
    public static Optional<RopeScaling> ropeScaling(JsonNode config) {
        JsonNode r = config.get("rope_scaling");
        if (r == null || !r.isObject()) {
            r = config.get("rope_parameters");
            if (r != null && r.path("full_attention").isObject()) {
                r = r.get("full_attention");
            }
        }
        if (r == null || !r.isObject()) {
            return Optional.empty();
        }
        JsonNode t = r.has("rope_type") ? r.get("rope_type") : r.get("type");
        if (t == null || !t.isTextual()) {
            return Optional.empty();
        }
        float factor = r.has("factor") ? (float) number("factor", r.get("factor")) : 8.0f;
        Optional<Integer> orig = r.has("original_max_position_embeddings")
                ? Optional.of(intValue("original_max_position_embeddings", r.get("original_max_position_embeddings")))
                : Optional.empty();
        float low = r.has("low_freq_factor") ? (float) number("low_freq_factor", r.get("low_freq_factor")) : 1.0f;
        float high = r.has("high_freq_factor") ? (float) number("high_freq_factor", r.get("high_freq_factor")) : 4.0f;
        return Optional.of(new RopeScaling(t.asText().toLowerCase(java.util.Locale.ROOT), factor, orig, low, high));
    }

    /**
     * The config.json fields for GGUF KVs {@code kvs} (by key) of architecture {@code a}: the inverse of
     * {@link #toGguf} on the plain entries and linear/yarn rope scaling (the first HF field of each
     * entry; floats written as the shortest decimal that reads back as the same f32).
     */
    public static ObjectNode toHf(Architecture a, Map<String, GgufKv> kvs) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        String p = a.ggufName() + ".";
        for (Entry e : entries(a)) {
            GgufKv kv = kvs.get(p + e.ggufSuffix());
            if (kv == null || out.has(e.hfFields().getFirst())) {
                continue;
            }
            String f = e.hfFields().getFirst();
            if (kv.type() == GgufValueType.FLOAT32) {
                out.put(f, Double.parseDouble(Float.toString((Float) kv.value())));
            } else if (kv.type() == GgufValueType.STRING) {
                out.put(f, kv.asString());
            } else {
                out.put(f, kv.asLong());
            }
        }
        GgufKv type = kvs.get(p + "rope.scaling.type");
        GgufKv factor = kvs.get(p + "rope.scaling.factor");
        if (type != null && factor != null && type.type() == GgufValueType.STRING && factor.type() == GgufValueType.FLOAT32) {
            ObjectNode r = out.putObject("rope_scaling");
            r.put("rope_type", type.asString());
            r.put("factor", Double.parseDouble(Float.toString((Float) factor.value())));
            GgufKv orig = kvs.get(p + "rope.scaling.original_context_length");
            if (orig != null) {
                r.put("original_max_position_embeddings", orig.asLong());
            }
        }
        out.putArray("architectures").add(a.hfArchitecture());
        out.put("model_type", a.hfModelType());
        return out;
    }

    private static Object value(Entry e, JsonNode v) {
        String f = e.hfFields().getFirst();
        return switch (e.type()) {
            case UINT32 -> intValue(f, v);
            case FLOAT32 -> (float) number(f, v);
            case STRING -> {
                if (!v.isTextual()) {
                    throw new IllegalArgumentException("config.json " + f + " is not a string");
                }
                yield v.asText();
            }
            default -> throw new IllegalStateException(e.type().toString());
        };
    }

    private static int positive(JsonNode config, String f) {
        int v = intValue(f, field(config, List.of(f)).orElseThrow(() -> new IllegalArgumentException("config.json has no " + f)));
        if (v <= 0) {
            throw new IllegalArgumentException("config.json " + f + " = " + v + " is not positive");
        }
        return v;
    }

    private static int intValue(String f, JsonNode v) {
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.intValue() < 0) {
            throw new IllegalArgumentException("config.json " + f + " = " + v + " is not a non-negative 32-bit integer");
        }
        return v.intValue();
    }

    private static double number(String f, JsonNode v) {
        if (!v.isNumber()) {
            throw new IllegalArgumentException("config.json " + f + " = " + v + " is not a number");
        }
        return v.doubleValue();
    }

    /** The first present, non-null field among dotted paths {@code paths}. */
    static Optional<JsonNode> field(JsonNode config, List<String> paths) {
        for (String path : paths) {
            JsonNode n = config;
            for (String part : path.split("\\.")) {
                n = n == null || !n.isObject() ? null : n.get(part);
            }
            if (n != null && !n.isNull()) {
                return Optional.of(n);
            }
        }
        return Optional.empty();
    }

    private static int indexOf(List<GgufKv> kvs, String key) {
        for (int i = 0; i < kvs.size(); i++) {
            if (kvs.get(i).key().equals(key)) {
                return i;
            }
        }
        return -1;
    }

    private static GgufKv kv(String key, GgufValueType type, Object value) {
        return new GgufKv(key, type, value, 0, 0);
    }
}
