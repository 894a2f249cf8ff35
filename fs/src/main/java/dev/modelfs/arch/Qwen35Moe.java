package dev.modelfs.arch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Optional;

/**
 * Qwen 3.5 / 3.6 MoE text (GGUF {@code qwen35moe}, transformers' {@code Qwen3_5MoeForCausalLM}, {@code model_type
 * qwen3_5_moe_text}): the layers of {@link Qwen35} with Qwen2-MoE's feed-forward (router {@code mlp.gate}, experts
 * {@code mlp.experts.E.{gate,up,down}_proj}, which transformers fuses on load as it saves them per expert, a shared expert
 * and its sigmoid gate); transformers always normalizes the top-k weights, as llama.cpp's {@code qwen35moe} does.
 * Both directions (Hugging Face → GGUF: {@link Qwen35Synth}); the MTP layers are left out (docs/FORMATS.md §7.3, §7.5).
 */
public final class Qwen35Moe implements Qwen35Family {
    private static final List<LayerRule> LAYERS = Layers.of(GatedDeltaNet.NORMS, GatedDeltaNet.ATTENTION, GatedDeltaNet.LINEAR,
            Layers.routedExperts("mlp.gate", Qwen2Moe.EXPERTS), Qwen2Moe.SHARED_EXPERT);
    private static final Tables TABLES = new Tables("qwen35moe", List.of("Qwen3_5MoeForCausalLM"), List.of("qwen3_5_moe_text"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public Optional<Experts> experts() {
        return Optional.of(Qwen2Moe.EXPERTS);
    }

    @Override
    public List<ConfigKeys.Entry> configEntries() {
        return Qwen2Moe.ENTRIES;
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        Qwen35Family.super.completeHfConfig(c, m, p, hidden, heads, headDim);
        c.remove("intermediate_size");
    }
}
