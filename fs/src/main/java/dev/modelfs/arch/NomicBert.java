package dev.modelfs.arch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * Nomic BERT ({@code NomicBertModel}, native in transformers 5; Ollama's nomic-embed-text), GGUF {@code nomic-bert},
 * an encoder ({@link Bert#encoder()}): token type embeddings but no position embeddings (NeoX rotary on the whole
 * head, base {@code nomic-bert.rope.freq_base}), q/k/v fused as {@code blk.N.attn_qkv} (nomic's {@code Wqkv}, split
 * back into {@code self_attn.{q,k,v}_proj} thirds), post-norm LayerNorms with bias, a SwiGLU feed-forward without
 * biases ({@code fc11} up, {@code fc12} gate, {@code fc2} down in nomic's names; transformers'
 * {@code conversion_mapping.py} renames them the same way). Names: FORMATS.md §7.3.
 *
 * <p>GGUF → HF: {@code hidden_act} {@code silu} (SwiGLU), {@code layer_norm_eps}, {@code type_vocab_size},
 * {@code rope_theta}, {@code max_position_embeddings} (the converter's context: 2048 for v1/v1.5).
 * Refused: experts ({@code nomic-bert-moe} is another architecture), no {@code token_types.weight}.
 */
public final class NomicBert implements ArchSpec {
    private static final List<LayerRule> LAYERS = List.of(
            new LayerRule("self_attn.o_proj", "attn_output", d -> new long[]{d.hidden(), d.hidden()}),
            LayerRule.norm("post_attention_layernorm", "attn_output_norm"),
            new LayerRule("mlp.up_proj", "ffn_up", d -> new long[]{d.ff(), d.hidden()}),
            new LayerRule("mlp.gate_proj", "ffn_gate", d -> new long[]{d.ff(), d.hidden()}),
            new LayerRule("mlp.down_proj", "ffn_down", d -> new long[]{d.hidden(), d.ff()}),
            LayerRule.norm("post_mlp_layernorm", "layer_output_norm"));
    private static final List<String[]> GLOBALS = List.of(
            new String[] {"embeddings.word_embeddings", "token_embd"},
            new String[] {"embeddings.token_type_embeddings", "token_types"},
            new String[] {"embeddings.LayerNorm", "token_embd_norm"});
    private static final Tables TABLES = new Tables("nomic-bert", List.of("NomicBertModel"), List.of("nomic_bert"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public String hfLayerPrefix() {
        return "layers.";
    }

    @Override
    public List<String[]> globals() {
        return GLOBALS;
    }

    @Override
    public List<String> splitQkv() {
        return List.of("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj");
    }

    @Override
    public boolean encoder() {
        return true;
    }

    @Override
    public List<ConfigKeys.Entry> configEntries() {
        return Bert.ENTRIES;
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        Bert.requireTokenTypes(m);
        if (m.integer(p + "expert_count", 0L) > 0) {
            throw new IllegalArgumentException("nomic-bert with experts is not mapped");
        }
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        Bert.encoderConfig(c, m);
        c.put("hidden_act", "silu");
        c.put("head_dim", headDim);
    }
}
