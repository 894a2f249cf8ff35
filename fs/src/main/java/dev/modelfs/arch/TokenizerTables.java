package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Tokenizer mapping tables between HF {@code tokenizer.json}/{@code tokenizer_config.json} and GGUF
 * {@code tokenizer.ggml.*} metadata (docs/FORMATS.md §7.4, §7.5; llama.cpp {@code src/llama-vocab.cpp},
 * {@code convert_hf_to_gguf.py}).
 *
 * <p>Invariants: every enum's GGUF name / id is unique; {@link PreTokenizer#fromHf} and
 * {@link PreTokenizer#toHf} are inverse on the pre-tokenizers listed (the HF form is the one the
 * model's own {@code tokenizer.json} carries: a {@code Sequence} of one {@code Split} with the regex,
 * behaviour {@code Isolated}, and a {@code ByteLevel} with {@code use_regex false}; or, for GPT-2, a
 * lone {@code ByteLevel} with {@code use_regex true}). llama.cpp identifies the pre-tokenizer by hashing
 * the token ids of a probe text; modelfs identifies it by the regex, which is what llama.cpp then
 * applies, so a tokenizer with a known regex tokenizes identically.
 */
public final class TokenizerTables {

    private TokenizerTables() {
    }

    /** {@code llama_token_type} ({@code tokenizer.ggml.token_type} INT32 values). */
    public enum TokenType {
        UNDEFINED(0), NORMAL(1), UNKNOWN(2), CONTROL(3), USER_DEFINED(4), UNUSED(5), BYTE(6);

        private final int id;

        TokenType(int id) {
            this.id = id;
        }

        /** The GGUF value. */
        public int id() {
            return id;
        }

        /** The type with GGUF value {@code id}, if valid. */
        public static Optional<TokenType> byId(int id) {
            return id >= 0 && id < values().length ? Optional.of(values()[id]) : Optional.empty();
        }
    }

    /** {@code tokenizer.ggml.model} values modelfs writes/reads. */
    public enum TokenizerModel {
        /** SentencePiece-style BPE with byte fallback (Llama 2, Mistral): scores drive the merges. */
        LLAMA("llama"),
        /** Byte-level BPE (GPT-2, Llama 3, Qwen): merges drive the merges. */
        GPT2("gpt2");

        private final String ggufName;

        TokenizerModel(String ggufName) {
            this.ggufName = ggufName;
        }

        /** The {@code tokenizer.ggml.model} string. */
        public String ggufName() {
            return ggufName;
        }

        /**
         * The model of a {@code tokenizer.json} {@code model} object: BPE with {@code byte_fallback}
         * → LLAMA, BPE without → GPT2 (when the pre-tokenizer is byte-level), else empty.
         */
        public static Optional<TokenizerModel> fromHf(JsonNode tokenizerJson) {
            JsonNode model = tokenizerJson.path("model");
            if (!"BPE".equals(model.path("type").asText())) {
                return Optional.empty();
            }
            if (model.path("byte_fallback").asBoolean(false)) {
                return Optional.of(LLAMA);
            }
            return hasByteLevel(tokenizerJson.path("pre_tokenizer")) ? Optional.of(GPT2) : Optional.empty();
        }

        private static boolean hasByteLevel(JsonNode pre) {
            if ("ByteLevel".equals(pre.path("type").asText())) {
                return true;
            }
            for (JsonNode p : pre.path("pretokenizers")) {
                if (hasByteLevel(p)) {
                    return true;
                }
            }
            return false;
        }
    }

    /** {@code tokenizer.ggml.pre} values with the HF regex that produces them. */
    public enum PreTokenizer {
        /** Llama 3 (and 3.x). */
        LLAMA_BPE("llama-bpe", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", false),
        /** Qwen2, Qwen2.5, Qwen3. */
        QWEN2("qwen2", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", false),
        /** Qwen3.5. */
        QWEN35("qwen35", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", false),
        /**
         * Mistral's tekken (Mistral Nemo, Mistral Small 3.x, Ministral 3, Pixtral): the regex of their {@code tokenizer.json},
         * which llama.cpp's {@code llama-vocab.cpp} quotes as the original of its own rewrite.
         */
        TEKKEN("tekken", "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?"
                + "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", false),
        /**
         * gpt-oss's o200k (llama.cpp's {@code gpt-4o}, the name its converter and Ollama's {@code handle_gptoss} write): the
         * regex of the {@code tokenizer.json} files, which llama.cpp's {@code llama-vocab.cpp} quotes as the original of its
         * own rewrite.
         */
        GPT4O("gpt-4o", "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
                + "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
                + "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", false),
        /** GPT-2: the ByteLevel pre-tokenizer's built-in regex. */
        GPT2("gpt-2", "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", true);

        private final String ggufName;
        private final String hfRegex;
        private final boolean byteLevelRegex;

        PreTokenizer(String ggufName, String hfRegex, boolean byteLevelRegex) {
            this.ggufName = ggufName;
            this.hfRegex = hfRegex;
            this.byteLevelRegex = byteLevelRegex;
        }

        /** The {@code tokenizer.ggml.pre} string. */
        public String ggufName() {
            return ggufName;
        }

        /** The regex as HF writes it in {@code tokenizer.json} (before JSON escaping). */
        public String hfRegex() {
            return hfRegex;
        }

        /** The pre-tokenizer with this {@code tokenizer.ggml.pre}, if listed. */
        public static Optional<PreTokenizer> fromGguf(String pre) {
            for (PreTokenizer p : values()) {
                if (p.ggufName.equals(pre)) {
                    return Optional.of(p);
                }
            }
            return Optional.empty();
        }

        /**
         * Identifies a {@code tokenizer.json} {@code pre_tokenizer} object: exactly one Split regex that
         * is listed (plus a ByteLevel without regex), or a ByteLevel with {@code use_regex} (GPT-2).
         */
        public static Optional<PreTokenizer> fromHf(JsonNode preTokenizer) {
            List<String> regexes = new ArrayList<>();
            boolean[] byteLevelRegex = {false};
            collect(preTokenizer, regexes, byteLevelRegex);
            if (regexes.isEmpty() && byteLevelRegex[0]) {
                return Optional.of(GPT2);
            }
            if (regexes.size() != 1 || byteLevelRegex[0]) {
                return Optional.empty();
            }
            for (PreTokenizer p : values()) {
                if (!p.byteLevelRegex && p.hfRegex.equals(regexes.getFirst())) {
                    return Optional.of(p);
                }
            }
            return Optional.empty();
        }

        private static void collect(JsonNode n, List<String> regexes, boolean[] byteLevelRegex) {
            switch (n.path("type").asText()) {
                case "Sequence" -> n.path("pretokenizers").forEach(p -> collect(p, regexes, byteLevelRegex));
                case "Split" -> regexes.add(n.path("pattern").path("Regex").asText(null));
                case "ByteLevel" -> byteLevelRegex[0] |= n.path("use_regex").asBoolean(true);
                default -> regexes.add(null);
            }
        }

        /** The {@code tokenizer.json} {@code pre_tokenizer} object for this pre-tokenizer. */
        public ObjectNode toHf() {
            JsonNodeFactory f = JsonNodeFactory.instance;
            ObjectNode byteLevel = f.objectNode().put("type", "ByteLevel").put("add_prefix_space", false)
                    .put("trim_offsets", false).put("use_regex", byteLevelRegex);
            if (byteLevelRegex) {
                return byteLevel;
            }
            ObjectNode split = f.objectNode().put("type", "Split");
            split.putObject("pattern").put("Regex", hfRegex);
            split.put("behavior", "Isolated").put("invert", false);
            ObjectNode seq = f.objectNode().put("type", "Sequence");
            seq.putArray("pretokenizers").add(split).add(byteLevel);
            return seq;
        }
    }

    /**
     * Special-token roles: the {@code tokenizer_config.json} field naming the token ↔ the GGUF
     * {@code tokenizer.ggml.<ggufKey>} UINT32 id.
     */
    public enum SpecialToken {
        BOS("bos_token", "bos_token_id"), EOS("eos_token", "eos_token_id"), UNK("unk_token", "unknown_token_id"),
        SEP("sep_token", "seperator_token_id"), PAD("pad_token", "padding_token_id"), MASK("mask_token", "mask_token_id");

        private final String hfField;
        private final String ggufSuffix;

        SpecialToken(String hfField, String ggufSuffix) {
            this.hfField = hfField;
            this.ggufSuffix = ggufSuffix;
        }

        /** The {@code tokenizer_config.json} field. */
        public String hfField() {
            return hfField;
        }

        /** The full GGUF key ({@code tokenizer.ggml.bos_token_id} …; llama.cpp spells "seperator"). */
        public String ggufKey() {
            return "tokenizer.ggml." + ggufSuffix;
        }
    }

    /** {@code tokenizer_config.json} {@code add_bos_token} ↔ this BOOL key. */
    public static final String ADD_BOS = "tokenizer.ggml.add_bos_token";
    /** {@code tokenizer_config.json} {@code add_eos_token} ↔ this BOOL key. */
    public static final String ADD_EOS = "tokenizer.ggml.add_eos_token";
    /** {@code tokenizer_config.json} {@code add_sep_token}, or a TemplateProcessing pair with a separator ↔ this BOOL key. */
    public static final String ADD_SEP = "tokenizer.ggml.add_sep_token";
    /** Whether llama.cpp's SentencePiece tokenizer prefixes the text with a space (BOOL; llama.cpp's default: true). */
    public static final String ADD_SPACE_PREFIX = "tokenizer.ggml.add_space_prefix";
    /** {@code tokenizer.ggml.pre} of a SentencePiece-style vocabulary, as llama.cpp's converter writes it. */
    public static final String PRE = "tokenizer.ggml.pre";
    /** {@code tokenizer_config.json} {@code chat_template} (a string) ↔ this STRING key. */
    public static final String CHAT_TEMPLATE = "tokenizer.chat_template";

    /**
     * llama.cpp's {@code does_token_look_special}: added tokens that are CONTROL even when not marked
     * special ({@code <|…|>}, {@code <｜…｜>}, {@code <pad>}, {@code <mask>}, {@code <unused…>} …).
     */
    public static boolean looksSpecial(String token) {
        return token.equals("<pad>") || token.equals("<mask>") || token.equals("<2mass>") || token.equals("[@BOS@]")
                || (token.startsWith("<|") && token.endsWith("|>"))
                || (token.startsWith("<｜") && token.endsWith("｜>"))
                || (token.startsWith("<unused") && token.endsWith(">"));
    }

    /** Whether a SentencePiece vocabulary entry is a byte token {@code <0xHH>} (type BYTE). */
    public static boolean isByteToken(String token) {
        return token.length() == 6 && token.startsWith("<0x") && token.endsWith(">")
                && isHex(token.charAt(3)) && isHex(token.charAt(4));
    }

    private static boolean isHex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }
}
