package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Optional;

/**
 * The text model of Qwen3-VL-MoE (30B-A3B, 235B-A22B; GGUF {@code qwen3vlmoe}, llama.cpp's {@code Qwen3VLMoeTextModel}),
 * GGUF → Hugging Face only, as a {@code Qwen3MoeForCausalLM} folder: {@link Qwen3Moe}'s tensors (per-head q/k norms,
 * router {@code ffn_gate_inp}, experts {@code ffn_{gate,up,down}_exps} written per expert as {@code save_pretrained}
 * writes Qwen3-MoE) and interleaved M-RoPE, which is plain rope on text ({@link MropeText}). The published checkpoints
 * fuse each layer's experts ({@code mlp.experts.gate_up_proj} {@code [E, hidden, 2·I]}, transposed against transformers'
 * own layout); llama.cpp's converter splits and transposes them into the same stacked tensors as Qwen3-MoE's, so the
 * folder reads like any {@code qwen3moe} GGUF. Qwen3-VL-MoE's router always normalizes the top-k weights:
 * {@code norm_topk_prob} is true. Without {@code expert_feed_forward_length} (Ollama's converter writes none), the expert
 * width is llama.cpp's fallback {@code feed_forward_length / expert_used_count} (docs/FORMATS.md §7.3).
 */
public final class Qwen3VlMoe implements ArchSpec {
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION, Layers.QK_NORMS,
            List.of(Layers.FFN_NORM), Layers.routedExperts("mlp.gate", Qwen3Moe.EXPERTS));
    private static final Tables TABLES = new Tables("qwen3vlmoe", List.of("Qwen3VLMoeForConditionalGeneration"),
            List.of("qwen3_vl_moe"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public Optional<Experts> experts() {
        return Optional.of(Qwen3Moe.EXPERTS);
    }

    @Override
    public List<ConfigKeys.Entry> configEntries() {
        return Qwen3Moe.ROUTED;
    }

    @Override
    public void checkHfConfig(JsonNode config) {
        throw MropeText.ggufToHfOnly("qwen3vlmoe", "Qwen3MoeForCausalLM");
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        int hidden = (int) (long) m.integer(p + "embedding_length", 0L), heads = (int) (long) m.integer(p + "attention.head_count", 1L);
        MropeText.check(m, p, headDim(m, p, hidden, heads));
        long used = m.integer(p + "expert_used_count", 0L);
        if (used <= 0) {
            throw new IllegalArgumentException(p + "expert_used_count = " + used + ": not a mixture of experts llama.cpp runs");
        }
        if (m.integer(p + "expert_feed_forward_length", null) == null && m.integer(p + "feed_forward_length", 0L) % used != 0) {
            throw new IllegalArgumentException("no " + p + "expert_feed_forward_length and feed_forward_length "
                    + m.integer(p + "feed_forward_length", 0L) + " is no multiple of expert_used_count " + used);
        }
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        MropeText.name(c, "Qwen3MoeForCausalLM", "qwen3_moe");
        Qwen3Moe.everyLayerSparse(c, true);
        if (!c.has("moe_intermediate_size")) {   // llama.cpp: n_ff_exp = n_ff / n_expert_used
            c.put("moe_intermediate_size", m.integer(p + "feed_forward_length", 0L) / m.integer(p + "expert_used_count", 1L));
        }
    }
}
