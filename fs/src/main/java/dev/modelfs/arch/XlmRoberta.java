package dev.modelfs.arch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * XLM-RoBERTa ({@code XLMRobertaModel}; Ollama's bge-m3), which llama.cpp's converter writes as GGUF {@code bert}
 * with a SentencePiece Unigram vocabulary ({@code tokenizer.ggml.model} {@code t5}), the tell {@link #claims} uses.
 * Tensors as {@link Bert}'s. The converter cuts the first {@code pad_token_id + 1} rows of the position embeddings
 * (RoBERTa numbers positions from {@code pad_token_id + 1}) and lowers the context by as much
 * ({@code conversion/bert.py} {@code _xlmroberta_tokenizer_init}); the HF folder puts them back as
 * {@link #positionRowsCut} zero rows (never read for a real token) and {@code max_position_embeddings} =
 * context + cut, {@code pad_token_id} = {@code tokenizer.ggml.padding_token_id} (default 1).
 */
public final class XlmRoberta implements ArchSpec {
    private static final Tables TABLES = new Tables("bert", List.of("XLMRobertaModel"), List.of("xlm-roberta"), Bert.LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public boolean claims(GgufParams m) {
        return "t5".equals(m.string("tokenizer.ggml.model", null));
    }

    @Override
    public String hfLayerPrefix() {
        return "encoder.layer.";
    }

    @Override
    public List<String[]> globals() {
        return Bert.GLOBALS;
    }

    @Override
    public List<String> splitQkv() {
        return Bert.SPLIT_QKV;
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
    }

    @Override
    public long positionRowsCut(GgufParams m) {
        return m.integer("tokenizer.ggml.padding_token_id", 1L) + 1;
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        Bert.encoderConfig(c, m);
        c.put("position_embedding_type", "absolute");
        long cut = positionRowsCut(m);
        c.put("max_position_embeddings", m.integer(p + "context_length", 512L) + cut);
        c.put("pad_token_id", cut - 1);
    }
}
