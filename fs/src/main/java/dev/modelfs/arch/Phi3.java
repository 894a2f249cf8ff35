package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * Phi-3 / Phi-4 mini ({@code Phi3ForCausalLM}): fused {@code qkv_proj} ({@code attn_qkv}, q rows then k then
 * v) and {@code gate_up_proj} ({@code ffn_up}, gate rows first) kept fused on both sides, NeoX rope over
 * {@code partial_rotary_factor} of each head, {@code rope.scaling.original_context_length} and
 * {@code attention.sliding_window} (0 for none) as llama.cpp's {@code Phi3MiniModel} writes them. LongRoPE
 * (the 128k variants: {@code rope_factors_long/short}) is refused both ways.
 */
public final class Phi3 implements ArchSpec {
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

    /** {@code rope.dimension_count}, {@code rope.scaling.original_context_length}, {@code attention.sliding_window}. */
    @Override
    public List<GgufKv> extraKvs(JsonNode config, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        double partial = ConfigKeys.field(config, List.of("partial_rotary_factor", "rope_parameters.partial_rotary_factor"))
                .map(JsonNode::asDouble).orElse(1.0);
        int ropeDims = (int) (partial * d.hidden()) / d.heads();
        JsonNode orig = ConfigKeys.field(config, List.of("original_max_position_embeddings",
                "rope_parameters.original_max_position_embeddings", "rope_scaling.original_max_position_embeddings"))
                .orElseThrow(() -> new IllegalArgumentException("phi3 config.json has no original_max_position_embeddings"));
        if (!orig.canConvertToInt() || orig.intValue() <= 0) {
            throw new IllegalArgumentException("phi3 original_max_position_embeddings = " + orig + " is not a positive integer");
        }
        JsonNode window = config.path("sliding_window");
        int swa = window.isIntegralNumber() && window.intValue() > 0 ? window.intValue() : 0;
        return List.of(new GgufKv(p + "rope.dimension_count", GgufValueType.UINT32, ropeDims, 0, 0),
                new GgufKv(p + "rope.scaling.original_context_length", GgufValueType.UINT32, orig.intValue(), 0, 0),
                new GgufKv(p + "attention.sliding_window", GgufValueType.UINT32, swa, 0, 0));
    }

    @Override
    public int headDim(GgufParams m, String p, int hidden, int heads) {
        return (int) (long) m.integer(p + "attention.key_length", (long) hidden / heads);
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        if (m.hasTensor("rope_factors_long.weight") || m.hasTensor("rope_factors_short.weight")) {
            throw new IllegalArgumentException("phi3 with longrope scaling (rope_factors_long/short, the 128k variants) is not supported: "
                    + "modelfs does not rebuild rope_scaling long_factor/short_factor");
        }
    }

    /**
     * {@code original_max_position_embeddings} ({@code rope.scaling.original_context_length}),
     * {@code partial_rotary_factor} (rope dimensions over head dimension), {@code sliding_window} (llama.cpp
     * writes 0 for none); no {@code attention_bias}. Rope scaling KVs are refused.
     */
    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        if (c.has("rope_scaling")) {
            throw new IllegalArgumentException("phi3 with rope scaling (" + p + "rope.scaling.type) is not supported: Phi-3's "
                    + "rope_scaling is longrope/su with per-dimension factors, which modelfs does not rebuild");
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
    }
}
