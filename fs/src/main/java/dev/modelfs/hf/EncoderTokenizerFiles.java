package dev.modelfs.hf;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The Hugging Face tokenizer files of an encoder's GGUF vocabulary (docs/SEMANTICS.md "Hugging Face folder of GGUF
 * models"), as llama.cpp reads it ({@code src/llama-vocab.cpp}):
 * <ul>
 * <li>{@code tokenizer.ggml.model} {@code bert} (WPM): a {@code tokenizers} WordPiece model. llama.cpp's converter
 *   writes every non-control token in "phantom space" form ({@code ##x} as {@code x}, a word-initial {@code x} as
 *   {@code ▁x}), Ollama's every token but a {@code [bracketed]} one; the inverse gives the WordPiece vocabulary. BertNormalizer with
 *   {@code tokenizer.ggml.normalizer.lowercase} (default true) and {@code .strip_accents} (default: lowercase),
 *   BertPreTokenizer, {@code [CLS] $A [SEP]} (llama.cpp always adds bos and sep to a WPM text).</li>
 * <li>{@code t5} (UGM, XLM-RoBERTa's SentencePiece Unigram): a Unigram model with the scores, the
 *   {@code tokenizer.ggml.precompiled_charsmap} normalizer, a whitespace split when {@code remove_extra_whitespaces},
 *   the Metaspace pre-tokenizer (prefix as {@code add_space_prefix}) and RoBERTa's {@code <s> $A </s>} /
 *   {@code <s> $A </s> </s> $B </s>}, as transformers 5's {@code XLMRobertaTokenizer} writes them.</li>
 * </ul>
 * Control, unknown and user-defined tokens are added tokens. Pure functions of the GGUF header; deterministic.
 */
public final class EncoderTokenizerFiles {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final String SPACE = "\u2581";

    private EncoderTokenizerFiles() {}

    /** Whether {@code v} is an encoder vocabulary ({@code bert} or {@code t5}) handled here. */
    public static boolean handles(GgufVocab v) {
        return wordPiece(v) || unigram(v);
    }

    private static boolean wordPiece(GgufVocab v) {
        return v.model().equals("bert");
    }

    private static boolean unigram(GgufVocab v) {
        return v.model().equals("t5");
    }

    /** The special tokens llama.cpp uses: cls (its bos), sep, pad, unk, mask; absent ones are left out. */
    private record Specials(Integer cls, Integer sep, Integer mask) {
        static Specials of(GgufVocab v, GgufMeta m) {
            int n = v.tokens().size();
            Integer cls = idOr(m, "tokenizer.ggml.cls_token_id", v.bos(), n);
            Integer sep = idOr(m, "tokenizer.ggml.seperator_token_id", v.eos(), n);
            return new Specials(cls, sep, idOr(m, "tokenizer.ggml.mask_token_id", null, n));
        }
    }

    private static Integer idOr(GgufMeta m, String key, Integer dflt, int n) {
        Long id = m.integer(key, null);
        return id == null || id < 0 || id >= n ? dflt : Integer.valueOf(id.intValue());
    }

    /** The text of token {@code id} in the Hugging Face vocabulary (WordPiece: phantom space undone). */
    static String hfText(GgufVocab v, int id) {
        String t = v.tokens().get(id);
        if (!wordPiece(v) || v.types()[id] == GgufVocab.CONTROL) {
            return t;
        }
        if (t.startsWith(SPACE)) {
            return t.substring(SPACE.length());
        }
        // Ollama's converter (convert/convert_bert.go) keeps every [bracketed] token as it is
        return t.length() >= 2 && t.startsWith("[") && t.endsWith("]") ? t : "##" + t;
    }

    /** {@code tokenizer.json}. */
    public static byte[] tokenizerJson(GgufVocab v, GgufFile g) {
        GgufMeta m = new GgufMeta(g);
        Specials s = Specials.of(v, m);
        ObjectNode root = F.objectNode();
        root.put("version", "1.0");
        root.putNull("truncation");
        root.putNull("padding");
        ArrayNode added = root.putArray("added_tokens");
        for (int id : TokenizerFiles.addedIds(v)) {
            boolean special = v.types()[id] != GgufVocab.USER_DEFINED;
            added.addObject().put("id", id).put("content", hfText(v, id)).put("single_word", false).put("lstrip", false)
                    .put("rstrip", false).put("normalized", !special).put("special", special);
        }
        ObjectNode model;
        if (wordPiece(v)) {
            boolean lower = m.bool("tokenizer.ggml.normalizer.lowercase", true);
            boolean strip = m.bool("tokenizer.ggml.normalizer.strip_accents", lower);
            root.putObject("normalizer").put("type", "BertNormalizer").put("clean_text", true).put("handle_chinese_chars", true)
                    .put("strip_accents", strip).put("lowercase", lower);
            root.putObject("pre_tokenizer").put("type", "BertPreTokenizer");
            root.set("post_processor", template(v, s.cls(), s.sep(), false));
            root.putObject("decoder").put("type", "WordPiece").put("prefix", "##").put("cleanup", true);
            model = F.objectNode().put("type", "WordPiece");
            model.put("unk_token", v.unk() == null ? "[UNK]" : hfText(v, v.unk()));
            model.put("continuing_subword_prefix", "##").put("max_input_chars_per_word", 100);
            ObjectNode vocab = model.putObject("vocab");
            for (int i = 0; i < v.tokens().size(); i++) {
                String t = hfText(v, i);
                if (vocab.has(t)) {
                    throw new HfUnsupported("WordPiece token " + t + " (id " + i + ") appears twice");
                }
                vocab.put(t, i);
            }
        } else {
            boolean prefix = m.bool("tokenizer.ggml.add_space_prefix", true);
            byte[] charsmap = charsmap(g);
            if (charsmap != null) {
                root.putObject("normalizer").put("type", "Precompiled")
                        .put("precompiled_charsmap", Base64.getEncoder().encodeToString(charsmap));
            } else {
                root.putNull("normalizer");
            }
            ObjectNode meta = F.objectNode().put("type", "Metaspace").put("replacement", SPACE)
                    .put("prepend_scheme", prefix ? "always" : "never").put("split", true);
            if (m.bool("tokenizer.ggml.remove_extra_whitespaces", false)) {
                ObjectNode seq = F.objectNode().put("type", "Sequence");
                seq.putArray("pretokenizers").add(F.objectNode().put("type", "WhitespaceSplit")).add(meta);
                root.set("pre_tokenizer", seq);
            } else {
                root.set("pre_tokenizer", meta);
            }
            root.set("post_processor", template(v, v.bos(), v.eos(), true));
            root.set("decoder", meta.deepCopy());
            model = F.objectNode().put("type", "Unigram");
            if (v.unk() != null) {
                model.put("unk_id", v.unk());
            }
            ArrayNode vocab = model.putArray("vocab");
            for (int i = 0; i < v.tokens().size(); i++) {
                vocab.addArray().add(v.tokens().get(i)).add(v.scores()[i]);
            }
            model.put("byte_fallback", false);
        }
        root.set("model", model);
        return TokenizerFiles.write(root);
    }

    /** {@code <first> $A <last>} (pair: BERT's {@code $B <last>}, RoBERTa's {@code <last> $B <last>}). */
    private static ObjectNode template(GgufVocab v, Integer first, Integer last, boolean roberta) {
        if (first == null || last == null) {
            throw new HfUnsupported("no " + (first == null ? "cls/bos" : "sep/eos") + " token id for the encoder's template");
        }
        String a = v.tokens().get(first), b = v.tokens().get(last);
        ObjectNode t = F.objectNode().put("type", "TemplateProcessing");
        ArrayNode single = t.putArray("single");
        special(single, a, 0);
        sequence(single, "A", 0);
        special(single, b, 0);
        ArrayNode pair = t.putArray("pair");
        special(pair, a, 0);
        sequence(pair, "A", 0);
        special(pair, b, 0);
        int typeB = roberta ? 0 : 1;
        if (roberta) {
            special(pair, b, 0);
        }
        sequence(pair, "B", typeB);
        special(pair, b, typeB);
        ObjectNode specials = t.putObject("special_tokens");
        Map<String, Integer> ids = new LinkedHashMap<>();
        ids.put(a, first);
        ids.put(b, last);
        ids.forEach((text, id) -> {
            ObjectNode o = specials.putObject(text).put("id", text);
            o.putArray("ids").add(id);
            o.putArray("tokens").add(text);
        });
        return t;
    }

    private static void special(ArrayNode a, String id, int type) {
        a.addObject().putObject("SpecialToken").put("id", id).put("type_id", type);
    }

    private static void sequence(ArrayNode a, String id, int type) {
        a.addObject().putObject("Sequence").put("id", id).put("type_id", type);
    }

    private static byte[] charsmap(GgufFile g) {
        GgufKv kv = g.kv("tokenizer.ggml.precompiled_charsmap");
        if (kv == null) {
            return null;
        }
        if (kv.type() != GgufValueType.ARRAY) {
            throw new HfUnsupported("tokenizer.ggml.precompiled_charsmap is not an ARRAY");
        }
        GgufArray arr = (GgufArray) kv.value();
        if (arr.elementType() != GgufValueType.UINT8 && arr.elementType() != GgufValueType.INT8) {
            throw new HfUnsupported("tokenizer.ggml.precompiled_charsmap is not an ARRAY of bytes");
        }
        byte[] out = new byte[arr.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = ((Number) arr.values().get(i)).byteValue();
        }
        return out;
    }

    /** {@code tokenizer_config.json}; {@code maxLength} is the model's context length (or null). */
    public static byte[] tokenizerConfig(GgufVocab v, GgufFile g, Long maxLength) {
        ObjectNode root = F.objectNode();
        ObjectNode dec = root.putObject("added_tokens_decoder");
        for (int id : TokenizerFiles.addedIds(v)) {
            boolean special = v.types()[id] != GgufVocab.USER_DEFINED;
            dec.putObject(Integer.toString(id)).put("content", hfText(v, id)).put("lstrip", false).put("normalized", !special)
                    .put("rstrip", false).put("single_word", false).put("special", special);
        }
        specialTokens(v, g).forEach(root::put);
        root.put("clean_up_tokenization_spaces", wordPiece(v));
        if (maxLength != null) {
            root.put("model_max_length", maxLength);
        }
        root.put("tokenizer_class", "PreTrainedTokenizerFast");
        return TokenizerFiles.write(root);
    }

    /** {@code special_tokens_map.json}. */
    public static byte[] specialTokensMap(GgufVocab v, GgufFile g) {
        ObjectNode root = F.objectNode();
        specialTokens(v, g).forEach(root::put);
        return TokenizerFiles.write(root);
    }

    private static Map<String, String> specialTokens(GgufVocab v, GgufFile g) {
        Specials s = Specials.of(v, new GgufMeta(g));
        Map<String, String> out = new LinkedHashMap<>();
        List<Object[]> all = wordPiece(v)
                ? List.of(new Object[] {"cls_token", s.cls()}, new Object[] {"sep_token", s.sep()}, new Object[] {"unk_token", v.unk()},
                        new Object[] {"pad_token", v.pad()}, new Object[] {"mask_token", s.mask()})
                : List.of(new Object[] {"bos_token", v.bos()}, new Object[] {"eos_token", v.eos()}, new Object[] {"cls_token", v.bos()},
                        new Object[] {"sep_token", v.eos()}, new Object[] {"unk_token", v.unk()}, new Object[] {"pad_token", v.pad()},
                        new Object[] {"mask_token", s.mask()});
        for (Object[] e : all) {   // an UNUSED placeholder is no special token (llama.cpp's converter loses XLM-R's <mask> so)
            if (e[1] != null && v.types()[(Integer) e[1]] != GgufVocab.UNUSED) {
                out.put((String) e[0], hfText(v, (Integer) e[1]));
            }
        }
        return out;
    }
}
