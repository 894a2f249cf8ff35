package dev.modelfs.arch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * BERT ({@code BertModel}; Ollama's all-minilm, mxbai-embed-large, snowflake-arctic-embed), GGUF {@code bert}
 * with a WordPiece vocabulary ({@code tokenizer.ggml.model} {@code bert}), an encoder ({@link #encoder()}):
 * learned absolute position embeddings, token type embeddings, LayerNorm with bias after attention and after the
 * feed-forward (post-norm), GELU feed-forward with biases, no {@code lm_head} (llama.cpp's converter drops the
 * pooler and the MLM head, {@code conversion/bert.py} {@code BertModel.filter_tensors}). Names: FORMATS.md §7.3.
 *
 * <p>GGUF → HF: {@code layer_norm_eps} from {@code bert.attention.layer_norm_epsilon}, {@code type_vocab_size}
 * from {@code tokenizer.ggml.token_type_count} (the converter writes the source's), {@code hidden_act} {@code gelu}
 * (a GGUF does not store it; llama.cpp's graph uses GELU); a fused {@code attn_qkv} (llama.cpp's
 * {@code --fuse-qkv}) is split back into query, key and value. Refused: no {@code token_types.weight} (transformers'
 * BERT always adds a token type row; llama.cpp makes it optional), classifier heads ({@code cls.*}: no HF name).
 */
public final class Bert implements ArchSpec {
    /** The BERT layer (HF names after {@code encoder.layer.N.}), shared with {@link XlmRoberta}. */
    static final List<LayerRule> LAYERS = List.of(
            new LayerRule("attention.self.query", "attn_q", d -> new long[]{d.hidden(), d.hidden()}),
            new LayerRule("attention.self.key", "attn_k", d -> new long[]{d.hidden(), d.hidden()}),
            new LayerRule("attention.self.value", "attn_v", d -> new long[]{d.hidden(), d.hidden()}),
            new LayerRule("attention.output.dense", "attn_output", d -> new long[]{d.hidden(), d.hidden()}),
            LayerRule.norm("attention.output.LayerNorm", "attn_output_norm"),
            new LayerRule("intermediate.dense", "ffn_up", d -> new long[]{d.ff(), d.hidden()}),
            new LayerRule("output.dense", "ffn_down", d -> new long[]{d.hidden(), d.ff()}),
            LayerRule.norm("output.LayerNorm", "layer_output_norm"));
    /** The embeddings (no output norm, no output). */
    static final List<String[]> GLOBALS = List.of(
            new String[] {"embeddings.word_embeddings", "token_embd"},
            new String[] {"embeddings.position_embeddings", "position_embd"},
            new String[] {"embeddings.token_type_embeddings", "token_types"},
            new String[] {"embeddings.LayerNorm", "token_embd_norm"});
    static final List<String> SPLIT_QKV = List.of("attention.self.query", "attention.self.key", "attention.self.value");
    /** {@code layer_norm_eps} ↔ {@code <arch>.attention.layer_norm_epsilon}. */
    static final List<ConfigKeys.Entry> ENTRIES = List.of(
            new ConfigKeys.Entry("attention.layer_norm_epsilon", GgufValueType.FLOAT32, List.of("layer_norm_eps"), false));
    private static final Tables TABLES = new Tables("bert", List.of("BertModel"), List.of("bert"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public boolean claims(GgufParams m) {
        return !"t5".equals(m.string("tokenizer.ggml.model", null));
    }

    @Override
    public String hfLayerPrefix() {
        return "encoder.layer.";
    }

    @Override
    public List<String[]> globals() {
        return GLOBALS;
    }

    @Override
    public List<String> splitQkv() {
        return SPLIT_QKV;
    }

    @Override
    public boolean encoder() {
        return true;
    }

    @Override
    public List<ConfigKeys.Entry> configEntries() {
        return ENTRIES;
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        requireTokenTypes(m);
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        encoderConfig(c, m);
        c.put("position_embedding_type", "absolute");
    }

    static void requireTokenTypes(GgufParams m) {
        if (!m.hasTensor("token_types.weight")) {
            throw new IllegalArgumentException("no token_types.weight (transformers' encoders always add a token type embedding)");
        }
    }

    /** The fields every encoder config has: gelu, the token type count, no decoder fields. */
    static void encoderConfig(ObjectNode c, GgufParams m) {
        c.put("hidden_act", "gelu");
        c.put("type_vocab_size", m.integer("tokenizer.ggml.token_type_count", 2L));
    }
}
