package dev.modelfs.arch;

import java.util.List;

/** Qwen3 dense ({@code Qwen3ForCausalLM}): per-head q/k norms, no biases, NeoX rope. */
public final class Qwen3 implements ArchSpec {
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION, Layers.QK_NORMS,
            List.of(Layers.FFN_NORM), Layers.DENSE_MLP);
    private static final Tables TABLES = new Tables("qwen3", List.of("Qwen3ForCausalLM"), List.of("qwen3"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }
}
