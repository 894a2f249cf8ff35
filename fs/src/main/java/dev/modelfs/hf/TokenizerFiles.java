package dev.modelfs.hf;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The Hugging Face tokenizer files of a GGUF vocabulary: {@code tokenizer.json} (a {@code tokenizers}
 * BPE model: byte-level with the pre-tokenizer {@code tokenizer.ggml.pre} names for {@code gpt2},
 * SentencePiece-style with byte fallback and the "legacy" {@code ▁} normalizer for {@code llama}),
 * {@code tokenizer_config.json} (special tokens, add_bos/add_eos, chat template) and
 * {@code special_tokens_map.json}. Pure functions of the {@link GgufVocab}; the output is
 * deterministic (same vocabulary, same bytes).
 */
public final class TokenizerFiles {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final String SPACE = "\u2581";

    private TokenizerFiles() {}

    /** {@code tokenizer.json}. */
    public static byte[] tokenizerJson(GgufVocab v) {
        PreTokenizers.Spec spec = v.spm() ? null : PreTokenizers.of(v.pre());
        ObjectNode root = F.objectNode();
        root.put("version", "1.0");
        root.putNull("truncation");
        root.putNull("padding");
        ArrayNode added = root.putArray("added_tokens");
        for (int id : addedIds(v)) {
            added.addObject().put("id", id).put("content", v.tokens().get(id)).put("single_word", false)
                    .put("lstrip", false).put("rstrip", false).put("normalized", false).put("special", special(v, id));
        }
        if (v.spm()) {
            // llama.cpp's SPM tokenizer prefixes a space to every text fragment that follows a special
            // token (or starts the text): Hugging Face's "legacy" Llama normalizer does the same
            ObjectNode norm = F.objectNode().put("type", "Sequence");
            ArrayNode ns = norm.putArray("normalizers");
            if (v.addSpacePrefix()) {
                ns.addObject().put("type", "Prepend").put("prepend", SPACE);
            }
            ObjectNode rep = ns.addObject().put("type", "Replace");
            rep.putObject("pattern").put("String", " ");
            rep.put("content", SPACE);
            root.set("normalizer", norm);
            root.putNull("pre_tokenizer");
        } else {
            root.set("normalizer", spec.normalizer());
            root.set("pre_tokenizer", spec.preTokenizer());
        }
        root.set("post_processor", postProcessor(v));
        root.set("decoder", decoder(v));
        ObjectNode model = root.putObject("model");
        model.put("type", "BPE");
        model.putNull("dropout");
        if (v.spm() && v.unk() != null) {
            model.put("unk_token", v.text(v.unk()));
        } else {
            model.putNull("unk_token");
        }
        model.putNull("continuing_subword_prefix");
        model.putNull("end_of_word_suffix");
        model.put("fuse_unk", v.spm());
        model.put("byte_fallback", v.spm());
        model.put("ignore_merges", spec != null && spec.ignoreMerges());
        ObjectNode vocab = model.putObject("vocab");
        for (int i = 0; i < v.tokens().size(); i++) {
            vocab.put(v.tokens().get(i), i);
        }
        ArrayNode merges = model.putArray("merges");
        if (v.merges() != null) {
            for (String m : v.merges()) {
                int sp = m.indexOf(' ', 1);
                if (sp < 0) {
                    throw new HfUnsupported("merge " + m + " has no space");
                }
                merges.addArray().add(m.substring(0, sp)).add(m.substring(sp + 1));
            }
        } else {
            for (String[] m : SpmMerges.derive(v.tokens(), v.scores())) {
                merges.addArray().add(m[0]).add(m[1]);
            }
        }
        return write(root);
    }

    /** {@code tokenizer_config.json} with the GGUF's own chat template; {@code maxLength} is the model's context length (or null). */
    public static byte[] tokenizerConfig(GgufVocab v, Long maxLength) {
        return tokenizerConfig(v, maxLength, v.chatTemplate());
    }

    /** {@code tokenizer_config.json} with {@code chatTemplate} (or none when null; {@link ChatTemplate}). */
    public static byte[] tokenizerConfig(GgufVocab v, Long maxLength, String chatTemplate) {
        ObjectNode root = F.objectNode();
        root.put("add_bos_token", v.addBos() && v.bos() != null);
        root.put("add_eos_token", v.addEos() && v.eos() != null);
        if (v.spm()) {
            root.put("add_prefix_space", v.addSpacePrefix());
            root.put("legacy", true);
        }
        ObjectNode dec = root.putObject("added_tokens_decoder");
        for (int id : addedIds(v)) {
            dec.putObject(Integer.toString(id)).put("content", v.tokens().get(id)).put("lstrip", false)
                    .put("normalized", false).put("rstrip", false).put("single_word", false).put("special", special(v, id));
        }
        specialTokens(v).forEach(root::put);
        for (String absent : List.of("bos_token", "eos_token", "unk_token")) {
            if (!root.has(absent)) {
                root.putNull(absent);   // explicit: transformers' model-specific classes have defaults
            }
        }
        if (chatTemplate != null) {
            root.put("chat_template", chatTemplate);
        }
        root.put("clean_up_tokenization_spaces", false);
        if (maxLength != null) {
            root.put("model_max_length", maxLength);
        }
        root.put("tokenizer_class", "PreTrainedTokenizerFast");
        return write(root);
    }

    /** {@code special_tokens_map.json}. */
    public static byte[] specialTokensMap(GgufVocab v) {
        ObjectNode root = F.objectNode();
        specialTokens(v).forEach(root::put);
        return write(root);
    }

    private static Map<String, String> specialTokens(GgufVocab v) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        if (v.bos() != null) {
            out.put("bos_token", v.text(v.bos()));
        }
        if (v.eos() != null) {
            out.put("eos_token", v.text(v.eos()));
        }
        if (v.unk() != null) {
            out.put("unk_token", v.text(v.unk()));
        }
        if (v.pad() != null) {
            out.put("pad_token", v.text(v.pad()));
        }
        return out;
    }

    /** Ids of tokens matched before the model runs: control, unknown and user-defined tokens, in id order. */
    static List<Integer> addedIds(GgufVocab v) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < v.types().length; i++) {
            int t = v.types()[i];
            if (t == GgufVocab.CONTROL || t == GgufVocab.UNKNOWN || t == GgufVocab.USER_DEFINED) {
                out.add(i);
            }
        }
        return out;
    }

    private static boolean special(GgufVocab v, int id) {
        return v.types()[id] != GgufVocab.USER_DEFINED;
    }

    private static ObjectNode postProcessor(GgufVocab v) {
        boolean bos = v.addBos() && v.bos() != null, eos = v.addEos() && v.eos() != null;
        ObjectNode byteLevel = v.spm() ? null : PreTokenizers.byteLevel(false, false, false);
        if (!bos && !eos) {
            return byteLevel;
        }
        ObjectNode t = F.objectNode().put("type", "TemplateProcessing");
        ArrayNode single = t.putArray("single"), pair = t.putArray("pair");
        for (int seq = 0; seq < 2; seq++) {
            for (ArrayNode a : seq == 0 ? List.of(single, pair) : List.of(pair)) {
                if (bos) {
                    a.addObject().putObject("SpecialToken").put("id", v.text(v.bos())).put("type_id", seq);
                }
                a.addObject().putObject("Sequence").put("id", seq == 0 ? "A" : "B").put("type_id", seq);
                if (eos) {
                    a.addObject().putObject("SpecialToken").put("id", v.text(v.eos())).put("type_id", seq);
                }
            }
        }
        ObjectNode specials = t.putObject("special_tokens");
        Map<String, Integer> ids = new HashMap<>();
        if (bos) {
            ids.put(v.text(v.bos()), v.bos());
        }
        if (eos) {
            ids.put(v.text(v.eos()), v.eos());
        }
        ids.forEach((text, id) -> {
            ObjectNode s = specials.putObject(text).put("id", text);
            s.putArray("ids").add(id);
            s.putArray("tokens").add(text);
        });
        if (byteLevel == null) {
            return t;
        }
        ObjectNode seq = F.objectNode().put("type", "Sequence");
        seq.putArray("processors").add(byteLevel).add(t);
        return seq;
    }

    private static ObjectNode decoder(GgufVocab v) {
        if (!v.spm()) {
            return PreTokenizers.byteLevel(true, true, true);
        }
        ObjectNode seq = F.objectNode().put("type", "Sequence");
        ArrayNode ds = seq.putArray("decoders");
        ObjectNode replace = ds.addObject().put("type", "Replace");
        replace.putObject("pattern").put("String", SPACE);
        replace.put("content", " ");
        ds.addObject().put("type", "ByteFallback");
        ds.addObject().put("type", "Fuse");
        if (v.addSpacePrefix()) {
            ds.addObject().put("type", "Strip").put("content", " ").put("start", 1).put("stop", 0);
        }
        return seq;
    }

    static byte[] write(com.fasterxml.jackson.databind.JsonNode root) {
        try {
            return JSON.writeValueAsBytes(root);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
