package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The token types llama.cpp's converter gives a Gemma 4 vocabulary, derived from what Ollama's file holds
 * (docs/FORMATS.md §12.6). Ollama's converter ({@code parseVocabularyFromTokenizer}) types every special added token
 * of {@code tokenizer.json} CONTROL, the other added tokens USER_DEFINED and everything else, byte tokens included,
 * NORMAL. llama.cpp's ({@code Gemma4Model.set_vocab} over gguf-py's {@code LlamaHfVocab}) types a token:
 * <ol>
 *   <li>USER_DEFINED when it is one of the seven tokens its converter always renders ({@link #VISIBLE});</li>
 *   <li>BYTE when its text is {@code <0xNN>};</li>
 *   <li>CONTROL when the tokenizer names it a special token: the ids the file records as
 *       {@code tokenizer.ggml.*_token_id} (the named special tokens Ollama's converter writes), and Gemma 4's
 *       model-specific special tokens, which every Gemma 4 {@code tokenizer_config.json} names and the file keeps
 *       no record of, recognized by their text ({@link #GEMMA4_SPECIAL});</li>
 *   <li>USER_DEFINED when Ollama's file types it so (an added token that is not special);</li>
 *   <li>NORMAL otherwise (the {@code <unusedN>} tokens and the other special added tokens no name refers to).</li>
 * </ol>
 * Invariant: the result has one type per token, and depends on nothing but the header.
 */
final class Gemma4TokenTypes {
    static final int NORMAL = 1;
    static final int CONTROL = 3;
    static final int USER_DEFINED = 4;
    static final int BYTE = 6;
    /** {@code visible_tokens} of llama.cpp's {@code Gemma4Model.set_vocab}: always rendered, so the chat parser reads them. */
    static final Set<String> VISIBLE = Set.of("<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", "<|tool_response>",
            "<tool_response|>", "<|\"|>");
    /**
     * Gemma 4's model-specific special tokens ({@code boi_token} ... {@code think_token} of its
     * {@code tokenizer_config.json}) and its extra special token {@code <|video|>}: special to transformers, so CONTROL
     * to llama.cpp's converter (unless {@link #VISIBLE}).
     */
    static final Set<String> GEMMA4_SPECIAL = Set.of("<|image>", "<image|>", "<|image|>", "<|audio>", "<audio|>", "<|audio|>",
            "<|video|>", "<|turn>", "<turn|>", "<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", "<|tool>", "<tool|>",
            "<|tool_response>", "<tool_response|>", "<|\"|>", "<|think|>");
    /** The special-token id keys Ollama's converter writes (its {@code SpecialVocabulary.Key()}, "seperator" included). */
    private static final String[] ID_KEYS = {"bos", "eos", "unknown", "seperator", "padding", "cls", "mask"};

    private Gemma4TokenTypes() {}

    /**
     * llama.cpp's types for the vocabulary of {@code g}, as an INT32 array.
     *
     * @throws FormatException when {@code tokenizer.ggml.tokens} is missing or not a string array, or
     *                         {@code tokenizer.ggml.token_type} is not an INT32 array of the same length
     */
    static GgufArray derive(GgufFile g) {
        GgufKv toks = g.kv("tokenizer.ggml.tokens");
        if (toks == null || !(toks.value() instanceof GgufArray tokens) || tokens.elementType() != GgufValueType.STRING) {
            throw new FormatException("no tokenizer.ggml.tokens (string array)");
        }
        GgufKv typesKv = g.kv("tokenizer.ggml.token_type");
        List<Object> stored = null;
        if (typesKv != null) {
            if (!(typesKv.value() instanceof GgufArray a) || a.elementType() != GgufValueType.INT32 || a.size() != tokens.size()) {
                throw new FormatException("tokenizer.ggml.token_type is not an INT32 array of the " + tokens.size() + " tokens' length");
            }
            stored = a.values();
        }
        Set<Long> named = new HashSet<>();
        for (String k : ID_KEYS) {
            long id = Markers.u32(g, "tokenizer.ggml." + k + "_token_id");
            if (id >= 0) {
                named.add(id);
            }
        }
        List<Object> out = new ArrayList<>(tokens.size());
        for (int i = 0; i < tokens.size(); i++) {
            String t = (String) tokens.values().get(i);
            int type;
            if (VISIBLE.contains(t)) {
                type = USER_DEFINED;
            } else if (isByte(t)) {
                type = BYTE;
            } else if (named.contains((long) i) || GEMMA4_SPECIAL.contains(t)) {
                type = CONTROL;
            } else if (stored != null && ((Integer) stored.get(i)) == USER_DEFINED) {
                type = USER_DEFINED;
            } else {
                type = NORMAL;
            }
            out.add(type);
        }
        return new GgufArray(GgufValueType.INT32, out);
    }

    /** {@code <0x[0-9A-Fa-f]{2}>}, LlamaHfVocab's byte-token pattern. */
    static boolean isByte(String t) {
        return t.length() == 6 && t.startsWith("<0x") && t.charAt(5) == '>' && hex(t.charAt(3)) && hex(t.charAt(4));
    }

    private static boolean hex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }
}
