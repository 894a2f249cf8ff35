package dev.modelfs.hf;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;

/**
 * The Hugging Face pre-tokenizer, normalizer and BPE options of each byte-level BPE vocabulary that
 * {@code tokenizer.ggml.pre} names (the inverse of the names llama.cpp's converter assigns; regexes
 * as the original {@code tokenizer.json} files spell them).
 *
 * <p>Invariant: {@link #of} knows exactly the names in {@link #SPLIT}, plus {@code default} and
 * {@code gpt-2} (GPT-2's own ByteLevel regex); any other name is an {@link HfUnsupported}.
 */
final class PreTokenizers {
    private PreTokenizers() {}

    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private static final String LLAMA3 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String QWEN2 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    /** Pre-tokenizer names whose split regex precedes a regex-less ByteLevel step. */
    static final Map<String, String> SPLIT = Map.of(
            "llama-bpe", LLAMA3, "llama3", LLAMA3, "llama-v3", LLAMA3,
            "qwen2", QWEN2);

    /** One byte-level family: its pre-tokenizer, normalizer (or null) and BPE {@code ignore_merges}. */
    record Spec(ObjectNode preTokenizer, ObjectNode normalizer, boolean ignoreMerges) {}

    static Spec of(String pre) {
        if (pre.equals("default") || pre.equals("gpt-2")) {
            return new Spec(byteLevel(false, true, true), null, false);
        }
        String regex = SPLIT.get(pre);
        if (regex == null) {
            throw new HfUnsupported("pre-tokenizer " + pre + " (tokenizer.ggml.pre) is not supported");
        }
        ObjectNode split = F.objectNode().put("type", "Split");
        split.putObject("pattern").put("Regex", regex);
        split.put("behavior", "Isolated").put("invert", false);
        ObjectNode seq = F.objectNode().put("type", "Sequence");
        seq.putArray("pretokenizers").add(split).add(byteLevel(false, !pre.equals("qwen2"), false));
        ObjectNode nfc = pre.equals("qwen2") ? F.objectNode().put("type", "NFC") : null;
        return new Spec(seq, nfc, SPLIT.get(pre) == LLAMA3);
    }

    /** llama.cpp's default {@code add_bos} of a gpt2 vocabulary without {@code tokenizer.ggml.add_bos_token}. */
    static boolean addsBos(String pre) {
        return SPLIT.get(pre) == LLAMA3;
    }

    static ObjectNode byteLevel(boolean addPrefixSpace, boolean trimOffsets, boolean useRegex) {
        return F.objectNode().put("type", "ByteLevel").put("add_prefix_space", addPrefixSpace)
                .put("trim_offsets", trimOffsets).put("use_regex", useRegex);
    }
}
