package dev.modelfs.hf;

import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;

/**
 * The vocabulary of a GGUF model as llama.cpp reads it ({@code tokenizer.ggml.*}, docs/FORMATS.md
 * §7.4), with llama.cpp's defaults filled in.
 *
 * <p>Invariants: {@code model} is {@code "gpt2"} (byte-level BPE), {@code "llama"} (SentencePiece), {@code "gemma4"}
 * (Gemma 4's SentencePiece-style BPE with its merges: {@code ▁} for spaces, byte fallback, never a space prefix, always
 * BOS, as llama.cpp's vocabulary reads it), or an encoder's
 * {@code "bert"} (WordPiece) or {@code "t5"} (Unigram), whose files {@link EncoderTokenizerFiles} writes;
 * {@code tokens} is non-empty; {@code types} and {@code scores} have one entry per token; every
 * special id is null or a valid token index (an id outside the vocabulary is read as absent, as llama.cpp does); {@code merges} is null only for {@code llama} vocabularies
 * without a merges list (their merges are derived from the scores).
 */
public record GgufVocab(String model, String pre, List<String> tokens, int[] types, float[] scores, List<String> merges,
                        Integer bos, Integer eos, Integer unk, Integer pad, boolean addBos, boolean addEos,
                        boolean addSpacePrefix, String chatTemplate) {

    /** llama.h {@code llama_token_type}. */
    public static final int NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6;

    /**
     * Reads the vocabulary.
     *
     * @throws HfUnsupported for a tokenizer model other than gpt2/llama, or missing/inconsistent arrays
     */
    public static GgufVocab read(GgufFile g) {
        GgufMeta m = new GgufMeta(g);
        String model = m.string("tokenizer.ggml.model", null);
        if (model == null) {
            throw new HfUnsupported("no tokenizer.ggml.model");
        }
        if (!List.of("gpt2", "llama", "gemma4", "bert", "t5").contains(model)) {
            throw new HfUnsupported("tokenizer.ggml.model " + model + " is not supported (gpt2, llama, gemma4, bert and t5 are)");
        }
        List<Object> raw = m.array("tokenizer.ggml.tokens", GgufValueType.STRING);
        if (raw == null || raw.isEmpty()) {
            throw new HfUnsupported("no tokenizer.ggml.tokens");
        }
        List<String> tokens = new ArrayList<>(raw.size());
        raw.forEach(o -> tokens.add((String) o));
        int n = tokens.size();
        int[] types = m.ints("tokenizer.ggml.token_type");
        if (types == null) {
            types = new int[n];
            java.util.Arrays.fill(types, NORMAL);
        } else if (types.length != n) {
            throw new HfUnsupported("tokenizer.ggml.token_type has " + types.length + " entries for " + n + " tokens");
        }
        float[] scores = new float[n];
        List<Object> rawScores = m.array("tokenizer.ggml.scores", GgufValueType.FLOAT32);
        if (rawScores != null) {
            if (rawScores.size() != n) {
                throw new HfUnsupported("tokenizer.ggml.scores has " + rawScores.size() + " entries for " + n + " tokens");
            }
            for (int i = 0; i < n; i++) {
                scores[i] = (Float) rawScores.get(i);
            }
        }
        List<String> merges = null;
        List<Object> rawMerges = m.array("tokenizer.ggml.merges", GgufValueType.STRING);
        if (rawMerges != null) {
            merges = new ArrayList<>(rawMerges.size());
            for (Object o : rawMerges) {
                merges.add((String) o);
            }
        } else if (model.equals("gpt2") || model.equals("gemma4")) {
            throw new HfUnsupported(model + " vocabulary without tokenizer.ggml.merges");
        }
        String pre = m.string("tokenizer.ggml.pre", "default");
        boolean spm = model.equals("llama");
        boolean gemma4 = model.equals("gemma4");   // llama.cpp: BPE (no space prefix), BOS always added
        boolean addBos = gemma4 || m.bool("tokenizer.ggml.add_bos_token", spm || PreTokenizers.addsBos(pre));
        boolean addEos = m.bool("tokenizer.ggml.add_eos_token", false);
        boolean addSpacePrefix = !gemma4 && m.bool("tokenizer.ggml.add_space_prefix", spm);
        Integer unk = id(m, "tokenizer.ggml.unknown_token_id", n);
        if (unk == null && spm) {
            int u = indexOfType(types, UNKNOWN);
            unk = u >= 0 ? u : null;
        }
        return new GgufVocab(model, pre, List.copyOf(tokens), types, scores, merges == null ? null : List.copyOf(merges),
                id(m, "tokenizer.ggml.bos_token_id", n), id(m, "tokenizer.ggml.eos_token_id", n), unk,
                id(m, "tokenizer.ggml.padding_token_id", n), addBos, addEos, addSpacePrefix,
                m.string("tokenizer.chat_template", null));
    }

    /**
     * A special token id, or null when absent or outside the vocabulary: llama.cpp ignores such a key ("bad special
     * token", {@code llama_vocab::impl::load}), and so does the folder (Ollama's gpt-oss converter writes the ids of
     * gpt-oss's own 201088-token vocabulary whatever the vocabulary; docs/SEMANTICS.md "Hugging Face folder of GGUF models").
     */
    private static Integer id(GgufMeta m, String key, int n) {
        Long v = m.integer(key, null);
        return v == null || v < 0 || v >= n ? null : v.intValue();
    }

    private static int indexOfType(int[] types, int type) {
        for (int i = 0; i < types.length; i++) {
            if (types[i] == type) {
                return i;
            }
        }
        return -1;
    }

    /** Whether the vocabulary is SentencePiece-style ({@code ▁} for spaces, byte fallback): {@code llama} or {@code gemma4}. */
    public boolean spm() {
        return model.equals("llama") || model.equals("gemma4");
    }

    /** The token text of an optional id, or null. */
    public String text(Integer id) {
        return id == null ? null : tokens.get(id);
    }
}
