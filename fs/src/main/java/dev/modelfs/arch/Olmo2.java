package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.gguf.GgufKv;
import java.util.List;

/**
 * OLMo 2 ({@code Olmo2ForCausalLM}): no pre-norms; a post-norm after attention ({@code post_attention_layernorm}
 * ↔ {@code post_attention_norm}) and after the feed-forward ({@code post_feedforward_layernorm} ↔ {@code post_ffw_norm});
 * q/k RMS norms over the whole projection ({@code q_norm} of {@code heads·head_dim}, {@code k_norm} of
 * {@code kv_heads·head_dim} values, not per head as Qwen 3's); NeoX rope, no row permutation. llama.cpp's
 * converter ({@code Olmo2Model}) writes the common KVs only (docs/FORMATS.md §7.4).
 *
 * <p>Refused, both ways: a head dimension other than {@code hidden / heads} (llama.cpp's {@code olmo2} assumes it);
 * sliding-window attention ({@code sliding_window} in {@code config.json}, {@code attention.sliding_window > 0} in a
 * GGUF: OLMo 3, which llama.cpp writes as {@code olmo2} but transformers runs as {@code Olmo3ForCausalLM}).
 */
public final class Olmo2 implements ArchSpec {
    private static final List<LayerRule> LAYERS = Layers.of(Layers.ATTENTION, List.of(
            new LayerRule("self_attn.q_norm", "attn_q_norm", d -> new long[]{Layers.q(d)}),
            new LayerRule("self_attn.k_norm", "attn_k_norm", d -> new long[]{Layers.kv(d)}),
            LayerRule.norm("post_attention_layernorm", "post_attention_norm")),
            Layers.DENSE_MLP, List.of(LayerRule.norm("post_feedforward_layernorm", "post_ffw_norm")));
    private static final Tables TABLES = new Tables("olmo2", List.of("Olmo2ForCausalLM"), List.of("olmo2"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public List<GgufKv> extraKvs(JsonNode config, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        HeadDims.requireQuotient("olmo2", d);
        JsonNode window = config.path("sliding_window");
        if (window.isNumber() && window.intValue() > 0) {
            throw new IllegalArgumentException("olmo2 with sliding_window (OLMo 3 layers) is not mapped");
        }
        return List.of();
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        if (m.integer(p + "attention.sliding_window", 0L) > 0) {
            throw new IllegalArgumentException("olmo2 with " + p + "attention.sliding_window (OLMo 3) is not mapped: "
                    + "transformers runs it as Olmo3ForCausalLM, which modelfs does not write");
        }
        HeadDims.requireQuotient("olmo2", m, p);
    }
}
