package dev.modelfs.arch;

import java.util.List;

/** Qwen3 dense ({@code Qwen3ForCausalLM}): per-head q/k norms, no biases, NeoX rope. */
public final class Qwen3 implements ArchSpec {
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION, Layers.QK_NORMS,
            List.of(Layers.FFN_NORM), Layers.DENSE_MLP);

    Qwen3() {
    }

    @Override
    public String ggufName() {
        return "qwen3";
    }

    @Override
    public List<String> hfArchitectures() {
        return List.of("Qwen3ForCausalLM");
    }

    @Override
    public List<String> hfModelTypes() {
        return List.of("qwen3");
    }

    @Override
    public List<LayerRule> layers() {
        return LAYERS;
    }
}
