package dev.modelfs.arch;

import java.util.List;

/**
 * Qwen 3.5 dense text (GGUF {@code qwen35}, transformers' {@code Qwen3_5ForCausalLM}, {@code model_type qwen3_5_text}):
 * gated delta-net and gated full-attention layers ({@link GatedDeltaNet}), a dense SwiGLU feed-forward, norms stored as
 * {@code 1 + w}. Both directions (Hugging Face → GGUF: {@link Qwen35Synth}); the MTP layers are left out (docs/FORMATS.md §7.3, §7.5).
 */
public final class Qwen35 implements Qwen35Family {
    private static final List<LayerRule> LAYERS = Layers.of(GatedDeltaNet.NORMS, GatedDeltaNet.ATTENTION, GatedDeltaNet.LINEAR,
            Layers.DENSE_MLP);
    private static final Tables TABLES = new Tables("qwen35", List.of("Qwen3_5ForCausalLM"), List.of("qwen3_5_text"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }
}
