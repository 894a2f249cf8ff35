package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Granite MoE ({@code GraniteMoeForCausalLM}, granite3.x-moe; llama.cpp's {@code granitemoe}, converter
 * {@code conversion/granite.py} {@code GraniteMoeModel}): llama attention (q/k rows permuted, FORMATS.md §7.2),
 * router {@code block_sparse_moe.router.layer} ↔ {@code ffn_gate_inp}, experts stored stacked only:
 * {@code block_sparse_moe.input_linear} {@code [E, 2·ff, hidden]} holds each expert's gate rows then its up rows
 * and is split into {@code ffn_gate_exps} and {@code ffn_up_exps} (an {@link Assembly}: expert by expert, the gate rows then the up rows; back the other way, a row split by the
 * two parts' rules),
 * {@code block_sparse_moe.output_linear} {@code [E, hidden, ff]} ↔ {@code ffn_down_exps}; each expert's
 * feed-forward size is {@code intermediate_size}.
 *
 * <p>The four multipliers are KVs: {@code attention_multiplier} ↔ {@code attention.scale} (the query scale, instead
 * of {@code 1/sqrt(head_dim)}), {@code embedding_multiplier} ↔ {@code embedding_scale}, {@code residual_multiplier}
 * ↔ {@code residual_scale}, {@code logits_scaling} ↔ {@code logit_scale} (the logits are divided by it; llama.cpp
 * requires it, so transformers' default 1 is written when the config has none). Back from a GGUF, an absent
 * {@code attention.scale} is llama.cpp's {@code 1/sqrt(head_dim)}, the other absent scales are 1. Refused: a
 * {@code head_dim} other than {@code hidden / heads} (the converter drops it, llama.cpp assumes the quotient) and
 * shared experts ({@code shared_intermediate_size}, GraniteMoeShared).
 */
public final class GraniteMoe implements ArchSpec {
    /** No per-expert HF form: the experts are stacked tensors of their own names. */
    static final Experts EXPERTS = new Experts(null, "gate", "up", "down", "intermediate_size", null);
    private static final String INPUT = "block_sparse_moe.input_linear";
    /** {@code input_linear}: per expert (batch), {@code ffn_gate_exps}'s rows, then {@code ffn_up_exps}'s. */
    static final Assembly INPUT_LINEAR = new Assembly(INPUT + ".weight", List.of(
            new Assembly.Part(List.of("ffn_gate_exps.weight"), false), new Assembly.Part(List.of("ffn_up_exps.weight"), false)),
            Assembly.Layout.STACKED);
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION, List.of(Layers.FFN_NORM),
            List.of(new LayerRule("block_sparse_moe.router.layer", "ffn_gate_inp", d -> new long[]{d.experts(), d.hidden()}),
                    new LayerRule(INPUT, "ffn_gate_exps", d -> new long[]{d.experts(), d.expertFf(), d.hidden()}),
                    new LayerRule(INPUT, "ffn_up_exps", d -> new long[]{d.experts(), d.expertFf(), d.hidden()}),
                    new LayerRule("block_sparse_moe.output_linear", "ffn_down_exps", d -> new long[]{d.experts(), d.hidden(), d.expertFf()})));
    private static final Tables TABLES = new Tables("granitemoe", List.of("GraniteMoeForCausalLM"), List.of("granitemoe"), LAYERS);
    /** HF multiplier ↔ GGUF suffix, in the converter's order. */
    private static final String[][] SCALES = {{"attention_multiplier", "attention.scale"}, {"embedding_multiplier", "embedding_scale"},
            {"residual_multiplier", "residual_scale"}, {"logits_scaling", "logit_scale"}};

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public Optional<Experts> experts() {
        return Optional.of(EXPERTS);
    }

    @Override
    public List<Assembly> assemblies() {
        return List.of(INPUT_LINEAR);
    }

    @Override
    public boolean permutesQk() {
        return true;
    }

    @Override
    public List<ConfigKeys.Entry> configEntries() {
        return Mixtral.ENTRIES;   // the same fields
    }

    @Override
    public boolean claims(GgufParams m) {
        return m.integer("granitemoe.expert_shared_feed_forward_length", 0L) == 0;
    }

    /** {@code rope.dimension_count} and the multipliers (each written when non-zero, as the converter does; {@code logit_scale} always). */
    @Override
    public List<GgufKv> extraKvs(JsonNode config, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        HeadDims.requireQuotient("granitemoe", d);   // the converter drops head_dim
        if (config.path("shared_intermediate_size").asLong(0) > 0) {
            throw new IllegalArgumentException("granitemoe with shared experts (shared_intermediate_size, GraniteMoeShared) is not mapped");
        }
        List<GgufKv> out = new ArrayList<>(List.of(Llama.ropeDimensions(p, d)));
        for (String[] s : SCALES) {
            JsonNode v = config.path(s[0]);
            if (!v.isMissingNode() && !v.isNull() && !v.isNumber()) {
                throw new IllegalArgumentException("granitemoe " + s[0] + " = " + v + " is not a number");
            }
            double x = v.isNumber() ? v.doubleValue() : s[0].equals("logits_scaling") ? 1.0 : 0.0;
            if (x != 0) {
                out.add(new GgufKv(p + s[1], GgufValueType.FLOAT32, (float) x, 0, 0));
            }
        }
        return out;
    }

    @Override
    public List<ComputedTensor> computedTensors(JsonNode config, List<GgufKv> kvs, ConfigKeys.Dims d) {
        return Llama.llama3RopeFreqs(config, kvs, d);
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        HeadDims.requireQuotient("granitemoe", m, p);
    }

    /** The multipliers from the scales (absent: llama.cpp's defaults); experts' size; no MLP bias. */
    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        for (String[] s : SCALES) {
            double dflt = s[0].equals("attention_multiplier") ? 1.0 / Math.sqrt(headDim) : 1.0;
            c.put(s[0], Double.parseDouble(Float.toString((float) (double) m.real(p + s[1], dflt))));
        }
        c.remove("head_dim");
    }
}
