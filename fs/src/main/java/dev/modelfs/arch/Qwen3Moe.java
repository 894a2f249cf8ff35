package dev.modelfs.arch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;
import java.util.Optional;

/**
 * Qwen3 MoE ({@code Qwen3MoeForCausalLM}): Qwen3 attention, router {@code mlp.gate} ({@code ffn_gate_inp}),
 * experts {@code mlp.experts.E.{gate,up,down}_proj} (stacked by Ollama as {@code mlp.experts.<proj>} or
 * {@code mlp.switch_mlp.<proj>}) ↔ {@code ffn_*_exps}; llama.cpp normalizes the top-k weights
 * ({@code norm_topk_prob}).
 */
public final class Qwen3Moe implements ArchSpec {
    static final Experts EXPERTS = new Experts("mlp.experts", "gate_proj", "up_proj", "down_proj", "moe_intermediate_size", null);
    static final List<ConfigKeys.Entry> ROUTED = List.of(
            new ConfigKeys.Entry("expert_count", GgufValueType.UINT32, List.of("num_experts", "num_local_experts"), true),
            new ConfigKeys.Entry("expert_used_count", GgufValueType.UINT32, List.of("num_experts_per_tok"), true),
            new ConfigKeys.Entry("expert_feed_forward_length", GgufValueType.UINT32, List.of("moe_intermediate_size"), true));
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION, Layers.QK_NORMS,
            List.of(Layers.FFN_NORM), Layers.routedExperts("mlp.gate", EXPERTS));
    private static final Tables TABLES = new Tables("qwen3moe", List.of("Qwen3MoeForCausalLM"), List.of("qwen3_moe"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public Optional<Experts> experts() {
        return Optional.of(EXPERTS);
    }

    @Override
    public List<ConfigKeys.Entry> configEntries() {
        return ROUTED;
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        everyLayerSparse(c, true);
    }

    /** The MoE fields of a config whose every layer is sparse, top-k weights normalized or not. */
    static void everyLayerSparse(ObjectNode c, boolean normTopk) {
        c.put("norm_topk_prob", normTopk);
        c.put("decoder_sparse_step", 1);
        c.putArray("mlp_only_layers");
    }
}
