package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;

/**
 * Phi-3 / Phi-4 mini ({@code Phi3ForCausalLM}): fused {@code qkv_proj} ({@code attn_qkv}, q rows then k then
 * v) and {@code gate_up_proj} ({@code ffn_up}, gate rows first) kept fused on both sides, NeoX rope over
 * {@code partial_rotary_factor} of each head, {@code rope.scaling.original_context_length} and
 * {@code attention.sliding_window} (0 for none) as llama.cpp's {@code Phi3MiniModel} writes them.
 *
 * <p>LongRoPE (the 128k variants, {@code rope_scaling} type {@code longrope} or {@code su}, docs/FORMATS.md §7.3):
 * the per-frequency {@code long_factor} / {@code short_factor} lists are the F32 tensors
 * {@code rope_factors_long.weight} / {@code rope_factors_short.weight} ({@code rope_dims / 2} values each) and the
 * attention factor is {@code rope.scaling.attn_factor}, which the converter computes as
 * {@code sqrt(1 + ln(s) / ln(original))} with {@code s = max_position_embeddings / original} (1 when
 * {@code s <= 1}); transformers computes the same from its {@code factor} (default {@code s}) unless
 * {@code attention_factor} is given, so a config whose attention factor differs from the converter's is
 * refused. Back from a GGUF, the factors are the tensors' values (read from the blob) and
 * {@code attention_factor} is written only when the GGUF's differs from transformers' default. Other rope
 * scaling KVs ({@code rope.scaling.type}) are refused.
 */
public final class Phi3 implements ArchSpec {
    static final String LONG = "rope_factors_long.weight", SHORT = "rope_factors_short.weight";
    private static final List<LayerRule> LAYERS = List.of(
            Layers.ATTN_NORM,
            new LayerRule("self_attn.qkv_proj", "attn_qkv", d -> new long[]{Layers.q(d) + 2 * Layers.kv(d), d.hidden()}),
            Layers.OUTPUT,
            Layers.FFN_NORM,
            new LayerRule("mlp.gate_up_proj", "ffn_up", d -> new long[]{2L * d.ff(), d.hidden()}),
            new LayerRule("mlp.down_proj", "ffn_down", d -> new long[]{d.hidden(), d.ff()}));
    private static final Tables TABLES = new Tables("phi3", List.of("Phi3ForCausalLM"), List.of("phi3"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public boolean writesRopeScaling(String type) {
        return type.equals("longrope") || type.equals("su");
    }

    /**
     * {@code rope.dimension_count}, {@code rope.scaling.original_context_length}, {@code attention.sliding_window},
     * and for LongRoPE {@code rope.scaling.attn_factor}.
     */
    @Override
    public List<GgufKv> extraKvs(JsonNode config, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        int orig = original(config);
        JsonNode window = config.path("sliding_window");
        int swa = window.isIntegralNumber() && window.intValue() > 0 ? window.intValue() : 0;
        List<GgufKv> out = new ArrayList<>(List.of(new GgufKv(p + "rope.dimension_count", GgufValueType.UINT32, ropeDims(config, d), 0, 0),
                new GgufKv(p + "rope.scaling.original_context_length", GgufValueType.UINT32, orig, 0, 0),
                new GgufKv(p + "attention.sliding_window", GgufValueType.UINT32, swa, 0, 0)));
        JsonNode rope = longRope(config);
        if (rope != null) {
            double s = (double) config.path("max_position_embeddings").asLong() / orig;
            double converter = attnFactor(s, orig);
            double hf = rope.path("attention_factor").isNumber() ? rope.get("attention_factor").asDouble()
                    : attnFactor(rope.path("factor").isNumber() ? rope.get("factor").asDouble() : s, orig);
            if (Math.abs(hf - converter) > 1e-6 * converter) {
                throw new IllegalArgumentException("phi3 longrope attention factor " + hf + " is not the " + converter
                        + " llama.cpp's converter writes (from max_position_embeddings / original_max_position_embeddings)");
            }
            out.add(new GgufKv(p + "rope.scaling.attn_factor", GgufValueType.FLOAT32, (float) converter, 0, 0));
        }
        return out;
    }

    /** LongRoPE's {@code rope_factors_long/short.weight} from {@code long_factor} / {@code short_factor}. */
    @Override
    public List<ComputedTensor> computedTensors(JsonNode config, List<GgufKv> kvs, ConfigKeys.Dims d) {
        JsonNode rope = longRope(config);
        if (rope == null) {
            return List.of();
        }
        int n = ropeDims(config, d) / 2;
        return List.of(new ComputedTensor(LONG, factors(rope, "long_factor", n)), new ComputedTensor(SHORT, factors(rope, "short_factor", n)));
    }

    @Override
    public int headDim(GgufParams m, String p, int hidden, int heads) {
        return (int) (long) m.integer(p + "attention.key_length", (long) hidden / heads);
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        if (m.hasTensor(LONG) != m.hasTensor(SHORT)) {
            throw new IllegalArgumentException("phi3 with only one of rope_factors_long/short (LongRoPE needs both)");
        }
    }

    /**
     * {@code original_max_position_embeddings} ({@code rope.scaling.original_context_length}),
     * {@code partial_rotary_factor} (rope dimensions over head dimension), {@code sliding_window} (llama.cpp
     * writes 0 for none), LongRoPE's {@code rope_scaling}; no {@code attention_bias}. Rope scaling KVs are refused.
     */
    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        if (c.has("rope_scaling")) {
            throw new IllegalArgumentException("phi3 with rope scaling (" + p + "rope.scaling.type) is not supported: Phi-3's "
                    + "long-context scaling is LongRoPE (rope_factors_long/short), which llama.cpp's converter writes without it");
        }
        c.remove("attention_bias");
        Long orig = m.integer(p + "rope.scaling.original_context_length", null);
        if (orig != null) {
            c.put("original_max_position_embeddings", orig);
        }
        long ropeDims = m.integer(p + "rope.dimension_count", (long) headDim);
        c.put("partial_rotary_factor", ropeDims == headDim ? 1.0 : (double) (ropeDims * heads) / hidden);
        long window = m.integer(p + "attention.sliding_window", 0L);
        if (window > 0) {
            c.put("sliding_window", window);
        } else {
            c.putNull("sliding_window");
        }
        if (m.hasTensor(LONG)) {
            c.set("rope_scaling", longRopeOf(m, p, ropeDims, orig));
        }
    }

    private static ObjectNode longRopeOf(GgufParams m, String p, long ropeDims, Long orig) {
        float[] lng = m.f32Vector(LONG), shrt = m.f32Vector(SHORT);
        if (lng == null || shrt == null || lng.length != ropeDims / 2 || shrt.length != ropeDims / 2) {
            throw new IllegalArgumentException("phi3 LongRoPE: rope_factors_long/short are not F32 vectors of " + ropeDims / 2
                    + " values modelfs could read");
        }
        if (orig == null || orig <= 0) {
            throw new IllegalArgumentException("phi3 LongRoPE without " + p + "rope.scaling.original_context_length");
        }
        ObjectNode r = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        r.put("rope_type", "longrope");
        ArrayNode l = r.putArray("long_factor");
        ArrayNode s = r.putArray("short_factor");
        for (int i = 0; i < lng.length; i++) {
            l.add(Double.parseDouble(Float.toString(lng[i])));
            s.add(Double.parseDouble(Float.toString(shrt[i])));
        }
        double scale = (double) m.integer(p + "context_length", orig) / orig;
        double dflt = attnFactor(scale, orig);
        double attn = m.real(p + "rope.scaling.attn_factor", dflt);
        if (Math.abs(attn - dflt) > 1e-6 * dflt) {
            r.put("attention_factor", Double.parseDouble(Float.toString((float) attn)));
        }
        return r;
    }

    /** The LongRoPE section of a config ({@code rope_scaling} or {@code rope_parameters} of type longrope/su), or null. */
    private static JsonNode longRope(JsonNode config) {
        if (ConfigKeys.ropeScaling(config).map(r -> r.type().equals("longrope") || r.type().equals("su")).orElse(false)) {
            JsonNode r = config.get("rope_scaling");
            return r != null && r.isObject() ? r : config.get("rope_parameters");
        }
        return null;
    }

    private static float[] factors(JsonNode rope, String field, int n) {
        JsonNode a = rope.path(field);
        if (!a.isArray() || a.size() != n) {
            throw new IllegalArgumentException("phi3 longrope " + field + " is not a list of " + n + " numbers (rope dimensions / 2)");
        }
        float[] out = new float[n];
        for (int i = 0; i < n; i++) {
            if (!a.get(i).isNumber()) {
                throw new IllegalArgumentException("phi3 longrope " + field + "[" + i + "] = " + a.get(i) + " is not a number");
            }
            out[i] = (float) a.get(i).asDouble();
        }
        return out;
    }

    /** LongRoPE's attention factor for scale {@code s}: {@code sqrt(1 + ln s / ln original)}, 1 when {@code s <= 1}. */
    static double attnFactor(double s, long original) {
        return s > 1 ? Math.sqrt(1 + Math.log(s) / Math.log(original)) : 1.0;
    }

    private static int original(JsonNode config) {
        JsonNode orig = ConfigKeys.field(config, List.of("original_max_position_embeddings",
                "rope_parameters.original_max_position_embeddings", "rope_scaling.original_max_position_embeddings"))
                .orElseThrow(() -> new IllegalArgumentException("phi3 config.json has no original_max_position_embeddings"));
        if (!orig.canConvertToInt() || orig.intValue() <= 0) {
            throw new IllegalArgumentException("phi3 original_max_position_embeddings = " + orig + " is not a positive integer");
        }
        return orig.intValue();
    }

    private static int ropeDims(JsonNode config, ConfigKeys.Dims d) {
        double partial = ConfigKeys.field(config, List.of("partial_rotary_factor", "rope_parameters.partial_rotary_factor"))
                .map(JsonNode::asDouble).orElse(1.0);
        return (int) (partial * d.hidden()) / d.heads();
    }
}
