package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * gpt-oss ({@code GptOssForCausalLM}; llama.cpp's {@code gpt-oss}, {@code LLM_ARCH_OPENAI_MOE}), GGUF → Hugging
 * Face only: llama attention with biases and per-head attention sinks ({@code self_attn.sinks} ↔
 * {@code attn_sinks.weight}), a post-attention norm ({@code post_attention_norm}), a router with a bias
 * ({@code mlp.router} ↔ {@code ffn_gate_inp}), and experts that transformers keeps fused and transposed:
 * {@code mlp.experts.gate_up_proj} {@code [E, hidden, 2·ff]} with gate and up in alternate columns,
 * {@code gate_up_proj_bias} {@code [E, 2·ff]} alternating the same way, {@code down_proj} {@code [E, ff, hidden]},
 * {@code down_proj_bias} {@code [E, hidden]}. llama.cpp's converter ({@code GptOssModel.modify_tensors}) splits
 * and transposes them into {@code ffn_{gate,up,down}_exps.{weight,bias}} (MXFP4 blocks when the source was
 * MXFP4), so the folder {@link #assemblies() assembles} them back. NeoX rope, no row permutation.
 *
 * <p>config.json: {@code sliding_window} from {@code attention.sliding_window} on every other layer, the
 * first sliding (llama.cpp's swa pattern 2, transformers' default {@code layer_types}); yarn rope scaling with
 * {@code beta_fast}/{@code beta_slow} from {@code rope.scaling.yarn_beta_*} and {@code truncate: false} (gpt-oss's
 * own setting, which the GGUF does not record). Refused: a separate sliding-window rope base, an expert
 * feed-forward size other than {@code feed_forward_length}, and the synthesized GGUF (safetensors → GGUF).
 *
 * <p>generation_config.json: {@code eos_token_id} lists the harmony format's stops as the published one does
 * ({@link #hfStopTokens}: a reply ends at {@code <|return|>}, a tool call at {@code <|call|>}), which llama.cpp also
 * treats as end of generation by their text; neither llama.cpp's conversion (eos {@code <|return|>}) nor Ollama's
 * (eos {@code <|endoftext|>}) has them all in {@code tokenizer.ggml.eos_token_id}.
 */
public final class GptOss implements ArchSpec {
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION, List.of(
            LayerRule.norm("post_attention_layernorm", "post_attention_norm"),
            new LayerRule("mlp.router", "ffn_gate_inp", d -> new long[]{d.experts(), d.hidden()})));
    private static final Tables TABLES = new Tables("gpt-oss", List.of("GptOssForCausalLM"), List.of("gpt_oss"), LAYERS);
    private static final List<ConfigKeys.Entry> ENTRIES = List.of(
            new ConfigKeys.Entry("expert_count", GgufValueType.UINT32, List.of("num_local_experts", "num_experts"), true),
            new ConfigKeys.Entry("expert_used_count", GgufValueType.UINT32, List.of("num_experts_per_tok"), true),
            new ConfigKeys.Entry("attention.sliding_window", GgufValueType.UINT32, List.of("sliding_window"), false));
    private static final List<Assembly> ASSEMBLIES = List.of(
            Assembly.renamed("self_attn.sinks", "attn_sinks.weight", Assembly.Layout.VECTOR),
            new Assembly("mlp.experts.gate_up_proj",
                    List.of(new Assembly.Part(List.of("ffn_gate_exps.weight", "ffn_up_exps.weight"), true)), Assembly.Layout.STACKED),
            new Assembly("mlp.experts.gate_up_proj_bias",
                    List.of(new Assembly.Part(List.of("ffn_gate_exps.bias", "ffn_up_exps.bias"), true)), Assembly.Layout.STACKED),
            new Assembly("mlp.experts.down_proj",
                    List.of(new Assembly.Part(List.of("ffn_down_exps.weight"), true)), Assembly.Layout.STACKED),
            Assembly.renamed("mlp.experts.down_proj_bias", "ffn_down_exps.bias", Assembly.Layout.STACKED));

    /** The published generation_config.json's stops, in its order (openai/gpt-oss: 200002, 199999, 200012). */
    private static final List<String> STOPS = List.of("<|return|>", "<|endoftext|>", "<|call|>");

    @Override
    public List<String> hfStopTokens() {
        return STOPS;
    }

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public List<String> requiredBiases() {
        return List.of("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate_inp");
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
        throw new IllegalArgumentException("gpt-oss: modelfs maps gpt-oss GGUFs to Hugging Face folders only, "
                + "not Hugging Face gpt-oss models to GGUF (the fused, transposed experts are not split)");
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        Double swa = m.real(p + "rope.freq_base_swa", null);
        if (swa != null && !swa.equals(m.real(p + "rope.freq_base", 10000.0))) {
            throw new IllegalArgumentException("gpt-oss with its own sliding-window rope base (" + p + "rope.freq_base_swa = " + swa
                    + "): transformers' GptOssForCausalLM has one rope_theta");
        }
        Long ff = m.integer(p + "feed_forward_length", null);
        Long expertFf = m.integer(p + "expert_feed_forward_length", ff);
        if (ff == null || !ff.equals(expertFf)) {
            throw new IllegalArgumentException("gpt-oss with expert_feed_forward_length " + expertFf + " and feed_forward_length " + ff
                    + ": transformers' GptOssForCausalLM has one intermediate_size");
        }
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        int layers = (int) (long) m.integer(p + "block_count", 0L);
        long window = m.integer(p + "attention.sliding_window", 0L);
        ArrayNode types = c.putArray("layer_types");
        for (int i = 0; i < layers; i++) {
            types.add(window > 0 && i % 2 == 0 ? "sliding_attention" : "full_attention");
        }
        if (window <= 0) {
            c.putNull("sliding_window");
        }
        ObjectNode yarn = YarnScaling.complete(c, m, p);
        if (yarn != null) {
            yarn.put("truncate", false);
        }
        c.put("attention_bias", true);
    }
}
