package dev.modelfs.hf;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.arch.TokenizerTables.PreTokenizer;

/**
 * The Hugging Face pre-tokenizer, normalizer and BPE options of the byte-level BPE vocabulary that
 * {@code tokenizer.ggml.pre} names, from the shared table {@link PreTokenizer} ({@code default} is
 * GPT-2's). Qwen's tokenizers add an NFC normalizer; Llama 3's set {@code ignore_merges}.
 */
final class PreTokenizers {
    private PreTokenizers() {}

    /** One byte-level family: its pre-tokenizer, normalizer (or null) and BPE {@code ignore_merges}. */
    record Spec(ObjectNode preTokenizer, ObjectNode normalizer, boolean ignoreMerges) {}

    static Spec of(String pre) {
        if (pre.equals(CHATGLM_BPE)) {   // Llama 3's expression; llama.cpp ignores merges for llama-bpe only
            return new Spec(PreTokenizer.LLAMA_BPE.toHf(), null, false);
        }
        PreTokenizer p = PreTokenizer.fromGguf(pre.equals("default") ? PreTokenizer.GPT2.ggufName() : pre)
                .orElseThrow(() -> new HfUnsupported("pre-tokenizer " + pre + " (tokenizer.ggml.pre) is not supported"));
        ObjectNode nfc = p == PreTokenizer.QWEN2 || p == PreTokenizer.QWEN35 ? JsonNodeFactory.instance.objectNode().put("type", "NFC") : null;
        return new Spec(p.toHf(), nfc, p == PreTokenizer.LLAMA_BPE);
    }

    /**
     * GLM-4's pre-tokenizer ({@code chatglm-bpe}, llama.cpp's {@code LLAMA_VOCAB_PRE_TYPE_CHATGLM4}, GLM-OCR's translated
     * header): Llama 3's expression without Llama 3's {@code ignore_merges}. Read only (GGUF → HF): a {@code tokenizer.json}
     * with that expression stays {@code llama-bpe} the other way.
     */
    static final String CHATGLM_BPE = "chatglm-bpe";

    /** llama.cpp's default {@code add_bos} of a gpt2 vocabulary without {@code tokenizer.ggml.add_bos_token}. */
    static boolean addsBos(String pre) {
        return pre.equals("llama-bpe") || pre.equals("llama3") || pre.equals("llama-v3");
    }

    static ObjectNode byteLevel(boolean addPrefixSpace, boolean trimOffsets, boolean useRegex) {
        return JsonNodeFactory.instance.objectNode().put("type", "ByteLevel").put("add_prefix_space", addPrefixSpace)
                .put("trim_offsets", trimOffsets).put("use_regex", useRegex);
    }
}
