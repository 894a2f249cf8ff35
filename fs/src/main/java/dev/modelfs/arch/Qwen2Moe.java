package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;
import java.util.Optional;

/**
 * Qwen2 MoE ({@code Qwen2MoeForCausalLM}, Qwen1.5-MoE / Qwen2-57B-A14B): Qwen2 attention (q/k/v biases),
 * router {@code mlp.gate} ({@code ffn_gate_inp}), experts {@code mlp.experts.E.{gate,up,down}_proj}
 * (stacked by Ollama's importer into {@code mlp.experts.<proj>.weight} {@code [E, out, in]}) ↔
 * {@code ffn_*_exps}, and a shared expert {@code mlp.shared_expert.*} ↔ {@code ffn_*_shexp} with its sigmoid
 * gate {@code mlp.shared_expert_gate} ({@code [1, hidden]}) ↔ {@code ffn_gate_inp_shexp}. llama.cpp does not
 * normalize the top-k weights, so a config with {@code norm_topk_prob} true is refused.
 */
public final class Qwen2Moe implements ArchSpec {
    static final Experts EXPERTS = new Experts("mlp.experts", "gate_proj", "up_proj", "down_proj", "moe_intermediate_size",
            "shared_expert_intermediate_size");
    /** The routed and the shared experts' sizes (also Qwen 3.5 MoE's). */
    static final List<ConfigKeys.Entry> ENTRIES = Layers.of(Qwen3Moe.ROUTED, List.of(
            new ConfigKeys.Entry("expert_shared_feed_forward_length", GgufValueType.UINT32, List.of("shared_expert_intermediate_size"), true)));
    /** The shared expert and its sigmoid gate (also Qwen 3.5 MoE's). */
    static final List<LayerRule> SHARED_EXPERT = List.of(
            new LayerRule("mlp.shared_expert_gate", "ffn_gate_inp_shexp", d -> new long[]{1, d.hidden()}),
            new LayerRule("mlp.shared_expert.gate_proj", "ffn_gate_shexp", d -> new long[]{d.sharedFf(), d.hidden()}),
            new LayerRule("mlp.shared_expert.up_proj", "ffn_up_shexp", d -> new long[]{d.sharedFf(), d.hidden()}),
            new LayerRule("mlp.shared_expert.down_proj", "ffn_down_shexp", d -> new long[]{d.hidden(), d.sharedFf()}));
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION, List.of(Layers.FFN_NORM),
            Layers.routedExperts("mlp.gate", EXPERTS), SHARED_EXPERT);
    private static final Tables TABLES = new Tables("qwen2moe", List.of("Qwen2MoeForCausalLM"), List.of("qwen2_moe"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public List<String> requiredBiases() {
        return Qwen2.QKV_BIASES;
    }

    @Override
    public Optional<Experts> experts() {
        return Optional.of(EXPERTS);
    }

    @Override
    public List<ConfigKeys.Entry> configEntries() {
        return ENTRIES;
    }

    @Override
    public List<GgufKv> extraKvs(JsonNode config, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        if (config.path("norm_topk_prob").asBoolean(false)) {
            throw new IllegalArgumentException("qwen2moe with norm_topk_prob true: llama.cpp's qwen2moe does not normalize the top-k weights");
        }
        return List.of();
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        Qwen3Moe.everyLayerSparse(c, false);
        c.put("qkv_bias", c.path("attention_bias").asBoolean(false));
    }
}
