package dev.modelfs.arch;

import java.util.List;

/** Qwen2 / Qwen2.5 ({@code Qwen2ForCausalLM}): q/k/v biases (required), NeoX rope, no row permutation. */
public final class Qwen2 implements ArchSpec {
    static final List<String> QKV_BIASES = List.of("attn_q", "attn_k", "attn_v");
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION,
            List.of(Layers.FFN_NORM), Layers.DENSE_MLP);
    private static final Tables TABLES = new Tables("qwen2", List.of("Qwen2ForCausalLM"), List.of("qwen2"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public List<String> requiredBiases() {
        return QKV_BIASES;
    }
}
