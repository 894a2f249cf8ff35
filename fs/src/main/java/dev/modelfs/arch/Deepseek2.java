package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;
import java.util.Optional;

/**
 * DeepSeek-V3 / R1 ({@code DeepseekV3ForCausalLM}; llama.cpp's {@code deepseek2}), GGUF → Hugging Face only:
 * multi-head latent attention ({@code q_a_proj}/{@code q_a_layernorm}/{@code q_b_proj} ↔ {@code attn_q_a}/
 * {@code attn_q_a_norm}/{@code attn_q_b}, {@code kv_a_proj_with_mqa}/{@code kv_a_layernorm} ↔
 * {@code attn_kv_a_mqa}/{@code attn_kv_a_norm}), and {@code kv_b_proj} {@code [heads·(nope+v), kv_lora]}: llama.cpp's
 * converter ({@code DeepseekV2Model.modify_tensors}) splits it per head into {@code attn_k_b}
 * ({@code [heads, kv_lora, nope]}, transposed) and {@code attn_v_b} ({@code [heads, v, kv_lora]}), which the folder
 * {@link #assemblies() assembles} back (older GGUFs keep {@code attn_kv_b}, mapped as it is). The first
 * {@code leading_dense_block_count} layers have a dense feed-forward ({@code mlp.{gate,up,down}_proj}), the
 * others a router {@code mlp.gate} ({@code ffn_gate_inp}) with the selection bias
 * {@code mlp.gate.e_score_correction_bias} ({@code exp_probs_b.bias}), routed experts (per expert in HF,
 * stacked {@code ffn_*_exps} in GGUF) and shared experts {@code mlp.shared_experts.*} ({@code ffn_*_shexp}).
 * Interleaved rope on {@code qk_rope_head_dim} dimensions (transformers' {@code rope_interleave}, llama.cpp's
 * normal rope: no row permutation).
 *
 * <p>config.json: the MLA ranks and head sizes ({@code attention.{q,kv}_lora_rank}, {@code key_length_mla} minus
 * {@code rope.dimension_count} for {@code qk_nope_head_dim}, {@code value_length_mla}; {@code key_length}/{@code
 * value_length} in GGUFs older than the MLA keys), grouped top-k routing ({@code expert_group_count},
 * {@code expert_group_used_count}), {@code routed_scaling_factor} ({@code expert_weights_scale}), {@code
 * norm_topk_prob} ({@code expert_weights_norm}), {@code num_key_value_heads} = heads (llama.cpp writes 1: MLA as
 * MQA), yarn's {@code mscale} and {@code mscale_all_dim} both {@code rope.scaling.yarn_log_multiplier / 0.1} (the
 * converter writes {@code 0.1 · mscale_all_dim}; DeepSeek's configs have {@code mscale = mscale_all_dim}).
 * Refused: a gating function other than sigmoid ({@code expert_gating_func} 2; absent means softmax to
 * llama.cpp: DeepSeek-V2), no {@code q_lora_rank} (V2-Lite), and the synthesized GGUF (safetensors → GGUF;
 * {@link #checkHfConfig} refuses it first, so the rules' HF shapes, -1 where {@link ConfigKeys.Dims} has no MLA
 * size, are never used).
 */
public final class Deepseek2 implements ArchSpec {
    static final Experts EXPERTS = new Experts("mlp.experts", "gate_proj", "up_proj", "down_proj", "moe_intermediate_size", null);
    /** llama.cpp's {@code LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID}. */
    static final long SIGMOID = 2;
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM,
                    new LayerRule("self_attn.q_a_proj", "attn_q_a", d -> new long[]{-1, d.hidden()}),
                    new LayerRule("self_attn.q_a_layernorm", "attn_q_a_norm", d -> new long[]{-1}),
                    new LayerRule("self_attn.q_b_proj", "attn_q_b", d -> new long[]{-1, -1}),
                    new LayerRule("self_attn.kv_a_proj_with_mqa", "attn_kv_a_mqa", d -> new long[]{-1, d.hidden()}),
                    new LayerRule("self_attn.kv_a_layernorm", "attn_kv_a_norm", d -> new long[]{-1}),
                    new LayerRule("self_attn.kv_b_proj", "attn_kv_b", d -> new long[]{-1, -1}),
                    new LayerRule("self_attn.o_proj", "attn_output", d -> new long[]{d.hidden(), -1}),
                    Layers.FFN_NORM),
            Layers.DENSE_MLP, Layers.routedExperts("mlp.gate", EXPERTS), List.of(
                    new LayerRule("mlp.shared_experts.gate_proj", "ffn_gate_shexp", d -> new long[]{-1, d.hidden()}),
                    new LayerRule("mlp.shared_experts.up_proj", "ffn_up_shexp", d -> new long[]{-1, d.hidden()}),
                    new LayerRule("mlp.shared_experts.down_proj", "ffn_down_shexp", d -> new long[]{d.hidden(), -1})));
    private static final Tables TABLES = new Tables("deepseek2", List.of("DeepseekV3ForCausalLM"), List.of("deepseek_v3"), LAYERS);
    private static final List<ConfigKeys.Entry> ENTRIES = List.of(
            new ConfigKeys.Entry("expert_count", GgufValueType.UINT32, List.of("n_routed_experts"), false),
            new ConfigKeys.Entry("expert_used_count", GgufValueType.UINT32, List.of("num_experts_per_tok"), false),
            new ConfigKeys.Entry("expert_group_count", GgufValueType.UINT32, List.of("n_group"), false),
            new ConfigKeys.Entry("expert_group_used_count", GgufValueType.UINT32, List.of("topk_group"), false),
            new ConfigKeys.Entry("leading_dense_block_count", GgufValueType.UINT32, List.of("first_k_dense_replace"), false),
            new ConfigKeys.Entry("attention.q_lora_rank", GgufValueType.UINT32, List.of("q_lora_rank"), false),
            new ConfigKeys.Entry("attention.kv_lora_rank", GgufValueType.UINT32, List.of("kv_lora_rank"), true),
            new ConfigKeys.Entry("expert_feed_forward_length", GgufValueType.UINT32, List.of("moe_intermediate_size"), true),
            new ConfigKeys.Entry("expert_shared_count", GgufValueType.UINT32, List.of("n_shared_experts"), true),
            new ConfigKeys.Entry("expert_weights_scale", GgufValueType.FLOAT32, List.of("routed_scaling_factor"), false),
            new ConfigKeys.Entry("rope.dimension_count", GgufValueType.UINT32, List.of("qk_rope_head_dim"), true));
    private static final List<Assembly> ASSEMBLIES = List.of(
            new Assembly("self_attn.kv_b_proj.weight", List.of(new Assembly.Part(List.of("attn_k_b.weight"), true),
                    new Assembly.Part(List.of("attn_v_b.weight"), false)), Assembly.Layout.ROWS),
            Assembly.renamed("mlp.gate.e_score_correction_bias", "exp_probs_b.bias", Assembly.Layout.VECTOR));

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public Optional<Experts> experts() {
        return Optional.of(EXPERTS);
    }

    @Override
    public List<ConfigKeys.Entry> configEntries() {
        return ENTRIES;
    }

    @Override
    public List<Assembly> assemblies() {
        return ASSEMBLIES;
    }

    @Override
    public void checkHfConfig(JsonNode config) {
        throw new IllegalArgumentException("deepseek2: modelfs maps DeepSeek GGUFs to Hugging Face folders only, "
                + "not Hugging Face DeepSeek models to GGUF (kv_b_proj is not split)");
    }

    /** {@code head_dim} of DeepseekV3Config: the rope part of a head. */
    @Override
    public int headDim(GgufParams m, String p, int hidden, int heads) {
        return (int) (long) m.integer(p + "rope.dimension_count", 64L);
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        long gating = m.integer(p + "expert_gating_func", 1L);
        if (gating != SIGMOID) {
            throw new IllegalArgumentException("deepseek2 with expert_gating_func " + gating + " (llama.cpp: 1 or absent softmax, 2 "
                    + "sigmoid): transformers' DeepseekV3ForCausalLM routes by sigmoid; softmax routing is DeepSeek-V2's");
        }
        if (m.integer(p + "attention.q_lora_rank", null) == null) {
            throw new IllegalArgumentException("deepseek2 without attention.q_lora_rank (DeepSeek-V2-Lite's plain q projection) "
                    + "is not mapped to DeepseekV3ForCausalLM");
        }
        if (!m.hasTensor("blk.0.attn_kv_b.weight") && !(m.hasTensor("blk.0.attn_k_b.weight") && m.hasTensor("blk.0.attn_v_b.weight"))) {
            throw new IllegalArgumentException("deepseek2 with neither attn_kv_b nor attn_k_b/attn_v_b: no kv_b_proj");
        }
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        boolean mla = m.integer(p + "attention.key_length_mla", null) != null;
        long key = m.integer(p + (mla ? "attention.key_length_mla" : "attention.key_length"), 0L);
        long value = m.integer(p + (mla ? "attention.value_length_mla" : "attention.value_length"), 0L);
        long rope = m.integer(p + "rope.dimension_count", 0L);
        if (key <= rope || value <= 0) {
            throw new IllegalArgumentException("deepseek2 with key length " + key + ", rope dimensions " + rope + ", value length " + value);
        }
        c.put("qk_nope_head_dim", key - rope);
        c.put("qk_rope_head_dim", rope);
        c.put("v_head_dim", value);
        c.put("head_dim", rope);
        c.put("num_key_value_heads", heads);
        if (!c.has("n_routed_experts")) {
            throw new IllegalArgumentException("deepseek2 without expert_count (a dense model) is not mapped to DeepseekV3ForCausalLM");
        }
        putDefault(c, "num_experts_per_tok", 1);
        putDefault(c, "n_group", 1);
        putDefault(c, "topk_group", 1);
        putDefault(c, "first_k_dense_replace", 0);
        if (!c.has("routed_scaling_factor")) {
            c.put("routed_scaling_factor", 1.0);
        }
        c.put("norm_topk_prob", m.bool(p + "expert_weights_norm", false));
        c.put("scoring_func", "sigmoid");
        c.put("topk_method", "noaux_tc");
        c.put("rope_interleave", true);
        c.put("num_mtp_layers", 0);
        c.put("attention_bias", false);
        ObjectNode r = YarnScaling.complete(c, m, p);
        if (r != null) {
            Double logMul = m.real(p + "rope.scaling.yarn_log_multiplier", null);
            if (logMul != null) {
                double all = YarnScaling.shortest(logMul / 0.1);
                r.put("mscale", all);
                r.put("mscale_all_dim", all);
            }
        }
    }

    private static void putDefault(ObjectNode c, String field, int value) {
        if (!c.has(field)) {
            c.put(field, value);
        }
    }
}
