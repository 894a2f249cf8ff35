package dev.modelfs.arch;

import java.util.function.Function;

/**
 * One per-layer tensor of an architecture: HF {@code model.layers.N.<hf>} ↔ GGUF {@code blk.N.<gguf>}
 * ({@code .weight}, and {@code .bias} with the first dimension of the weight), with the HF shape of the
 * weight that {@code config.json} implies. Every rule of an {@link ArchSpec} names a tensor llama.cpp
 * requires in every layer.
 */
public record LayerRule(String hf, String gguf, Function<ConfigKeys.Dims, long[]> shape) {

    /** A norm weight of {@code hidden_size} values. */
    static LayerRule norm(String hf, String gguf) {
        return new LayerRule(hf, gguf, d -> new long[]{d.hidden()});
    }
}
