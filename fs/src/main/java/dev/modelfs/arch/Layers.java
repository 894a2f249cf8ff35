package dev.modelfs.arch;

import java.util.ArrayList;
import java.util.List;

/**
 * The per-layer tensor rules several architectures share (llama.cpp's {@code tensor_mapping.py}); each
 * {@link ArchSpec} lists the ones it has, in llama.cpp's order.
 */
final class Layers {
    private Layers() {
    }

    static final LayerRule ATTN_NORM = LayerRule.norm("input_layernorm", "attn_norm");
    static final LayerRule FFN_NORM = LayerRule.norm("post_attention_layernorm", "ffn_norm");
    static final LayerRule OUTPUT = new LayerRule("self_attn.o_proj", "attn_output", d -> new long[]{d.hidden(), q(d)});

    /** Separate q/k/v projections and the output projection. */
    static final List<LayerRule> ATTENTION = List.of(
            new LayerRule("self_attn.q_proj", "attn_q", d -> new long[]{q(d), d.hidden()}),
            new LayerRule("self_attn.k_proj", "attn_k", d -> new long[]{kv(d), d.hidden()}),
            new LayerRule("self_attn.v_proj", "attn_v", d -> new long[]{kv(d), d.hidden()}),
            OUTPUT);

    /** Per-head q/k RMS norms. */
    static final List<LayerRule> QK_NORMS = List.of(
            new LayerRule("self_attn.q_norm", "attn_q_norm", d -> new long[]{d.headDim()}),
            new LayerRule("self_attn.k_norm", "attn_k_norm", d -> new long[]{d.headDim()}));

    /** Gemma 2 and 3's norms around attention and feed-forward, after the input norm. */
    static final List<LayerRule> SANDWICH_NORMS = List.of(
            LayerRule.norm("post_attention_layernorm", "post_attention_norm"),
            LayerRule.norm("pre_feedforward_layernorm", "ffn_norm"),
            LayerRule.norm("post_feedforward_layernorm", "post_ffw_norm"));

    /** A dense SwiGLU feed-forward. */
    static final List<LayerRule> DENSE_MLP = List.of(
            new LayerRule("mlp.gate_proj", "ffn_gate", d -> new long[]{d.ff(), d.hidden()}),
            new LayerRule("mlp.up_proj", "ffn_up", d -> new long[]{d.ff(), d.hidden()}),
            new LayerRule("mlp.down_proj", "ffn_down", d -> new long[]{d.hidden(), d.ff()}));

    /** The router {@code <router>} and the stacked experts of {@code e}. */
    static List<LayerRule> routedExperts(String router, Experts e) {
        return List.of(
                new LayerRule(router, "ffn_gate_inp", d -> new long[]{d.experts(), d.hidden()}),
                new LayerRule(e.stackedHf("gate"), "ffn_gate_exps", d -> new long[]{d.experts(), d.expertFf(), d.hidden()}),
                new LayerRule(e.stackedHf("up"), "ffn_up_exps", d -> new long[]{d.experts(), d.expertFf(), d.hidden()}),
                new LayerRule(e.stackedHf("down"), "ffn_down_exps", d -> new long[]{d.experts(), d.hidden(), d.expertFf()}));
    }

    /** The lists concatenated. */
    @SafeVarargs
    static <T> List<T> of(List<T>... parts) {
        List<T> out = new ArrayList<>();
        for (List<T> p : parts) {
            out.addAll(p);
        }
        return List.copyOf(out);
    }

    static long q(ConfigKeys.Dims d) {
        return (long) d.heads() * d.headDim();
    }

    static long kv(ConfigKeys.Dims d) {
        return (long) d.headsKv() * d.headDim();
    }
}
