package dev.modelfs.hf;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.arch.Architecture;
import dev.modelfs.arch.GgufParams;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The sentence-transformers files of an embedding model's Hugging Face folder (docs/SEMANTICS.md "Hugging Face
 * folder of GGUF models"), from the GGUF's {@code <arch>.pooling_type} (llama.cpp's {@code llama_pooling_type}:
 * 1 MEAN, 2 CLS, 3 LAST; llama.cpp's converter reads it from the source's {@code modules.json} and
 * {@code 1_Pooling/config.json}, {@code conversion/base.py} {@code _try_set_pooling_type}), in the format every
 * sentence-transformers release reads (the one the library's models on the Hub ship):
 * <ul>
 * <li>{@code modules.json}: {@code Transformer} (the folder itself), {@code Pooling} ({@code 1_Pooling}),
 *   {@code Normalize} ({@code 2_Normalize}, no files): Ollama's {@code /api/embed} L2-normalizes every embedding
 *   ({@code server/routes.go} {@code EmbedHandler}), and a GGUF does not say whether its source did;</li>
 * <li>{@code sentence_bert_config.json}: {@code max_seq_length} = the context length, {@code do_lower_case} false
 *   (the tokenizer lowercases where the vocabulary says so);</li>
 * <li>{@code 1_Pooling/config.json}: {@code word_embedding_dimension} = {@code embedding_length}, exactly one of
 *   {@code pooling_mode_mean_tokens}, {@code pooling_mode_cls_token}, {@code pooling_mode_lasttoken} true;</li>
 * <li>{@code config_sentence_transformers.json}: cosine similarity, no prompts.</li>
 * </ul>
 * Invariant: empty exactly when the GGUF has no pooling type among those three (a causal LM, a reranker's RANK,
 * NONE); deterministic.
 */
public final class SentenceTransformerFiles {
    /** llama.cpp's {@code LLAMA_POOLING_TYPE_*} that sentence-transformers' {@code Pooling} has. */
    static final int MEAN = 1, CLS = 2, LAST = 3;
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private SentenceTransformerFiles() {}

    /** The files (path in the folder → bytes) for a model with metadata {@code m} ({@code p}: {@code "<arch>."}). */
    public static Map<String, byte[]> of(Architecture arch, GgufParams m, String p, int hidden, Long context) {
        long pooling = m.integer(p + "pooling_type", 0L);
        if (pooling != MEAN && pooling != CLS && pooling != LAST) {
            return Map.of();
        }
        Map<String, byte[]> out = new LinkedHashMap<>();
        ArrayNode modules = F.arrayNode();
        module(modules, 0, "", "Transformer");
        module(modules, 1, "1_Pooling", "Pooling");
        module(modules, 2, "2_Normalize", "Normalize");
        out.put("modules.json", TokenizerFiles.write(modules));
        ObjectNode sbert = F.objectNode();
        if (context != null) {
            sbert.put("max_seq_length", context);
        }
        sbert.put("do_lower_case", false);
        out.put("sentence_bert_config.json", TokenizerFiles.write(sbert));
        ObjectNode pool = F.objectNode().put("word_embedding_dimension", hidden)
                .put("pooling_mode_cls_token", pooling == CLS).put("pooling_mode_mean_tokens", pooling == MEAN)
                .put("pooling_mode_max_tokens", false).put("pooling_mode_mean_sqrt_len_tokens", false)
                .put("pooling_mode_weightedmean_tokens", false).put("pooling_mode_lasttoken", pooling == LAST)
                .put("include_prompt", true);
        out.put("1_Pooling/config.json", TokenizerFiles.write(pool));
        ObjectNode st = F.objectNode();
        st.putObject("prompts");
        st.putNull("default_prompt_name");
        st.put("similarity_fn_name", "cosine");
        out.put("config_sentence_transformers.json", TokenizerFiles.write(st));
        return out;
    }

    private static void module(ArrayNode modules, int idx, String path, String type) {
        modules.addObject().put("idx", idx).put("name", Integer.toString(idx)).put("path", path)
                .put("type", "sentence_transformers.models." + type);
    }
}
