package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The GGUF {@code tokenizer.*} metadata of an HF tokenizer ({@code tokenizer.json},
 * {@code tokenizer_config.json}, {@code config.json}), derived the way llama.cpp's
 * {@code convert_hf_to_gguf.py} derives it (docs/FORMATS.md §7.5), with one deliberate difference: the
 * scores of a byte-fallback BPE ({@code tokenizer.ggml.model = llama}) are {@code -(merge rank + 1)}
 * for tokens a merge produces and 0 otherwise, so that llama.cpp's score-driven merging follows the
 * merge order (the converter writes -1000 for every token, which makes llama.cpp merge left to right).
 *
 * <p>Invariants of the result: {@code tokenizer.ggml.tokens}, {@code .token_type} (and {@code .scores})
 * have exactly {@code nVocab} entries; token strings are unique; ids absent from the tokenizer are
 * {@code [PAD<id>]} of type UNUSED; special-token ids are below {@code nVocab}. Anything else (a
 * tokenizer model other than BPE, an unrecognized byte-level pre-tokenizer, ids at or above
 * {@code nVocab}, duplicate token strings, malformed entries) is an {@link IllegalArgumentException}
 * with a one-line reason.
 */
public final class TokenizerKvs {
    private static final List<String> SPECIAL_TYPES = List.of("bos", "eos", "unk", "sep", "pad", "cls", "mask");

    private TokenizerKvs() {
    }

    /**
     * The tokenizer KVs of a model of architecture {@code arch}: {@link #of(JsonNode, JsonNode, JsonNode, int)} and
     * then the architecture's own ({@link ArchSpec#tokenizerExtras}, e.g. Gemma's {@code add_space_prefix = false}).
     */
    public static List<GgufKv> of(JsonNode tokenizer, JsonNode tokenizerConfig, JsonNode config, int nVocab, ArchSpec arch) {
        List<GgufKv> out = new ArrayList<>(of(tokenizer, tokenizerConfig, config, nVocab));
        TokenizerTables.TokenizerModel model = TokenizerTables.TokenizerModel.fromHf(tokenizer).orElseThrow();
        out.addAll(arch.tokenizerExtras(model, nVocab));
        return List.copyOf(arch.reviseTokenizerKvs(List.copyOf(out), tokenizer, tokenizerConfig));
    }

    /** The tokenizer KVs; {@code tokenizerConfig} and {@code config} may be null. */
    public static List<GgufKv> of(JsonNode tokenizer, JsonNode tokenizerConfig, JsonNode config, int nVocab) {
        if (tokenizer == null || !tokenizer.isObject()) {
            throw new IllegalArgumentException("tokenizer.json is not a JSON object");
        }
        TokenizerTables.TokenizerModel model = TokenizerTables.TokenizerModel.fromHf(tokenizer)
                .orElseThrow(() -> new IllegalArgumentException("tokenizer.json: model type "
                        + tokenizer.path("model").path("type").asText("?") + " is not a byte-level or byte-fallback BPE"));
        String[] tokens = new String[nVocab];
        Map<String, Integer> vocab = new HashMap<>();
        JsonNode v = tokenizer.path("model").path("vocab");
        if (!v.isObject()) {
            throw new IllegalArgumentException("tokenizer.json: model.vocab is not an object");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            int id = id(e.getValue(), nVocab, e.getKey());
            place(tokens, id, e.getKey());
            vocab.put(e.getKey(), id);
        }
        Map<String, Integer> addedIds = new HashMap<>();
        Set<Integer> control = new HashSet<>();
        Set<Integer> userDefined = new HashSet<>();
        for (JsonNode a : tokenizer.path("added_tokens")) {
            String content = a.path("content").asText(null);
            if (content == null || !a.path("content").isTextual()) {
                throw new IllegalArgumentException("tokenizer.json: added token without content");
            }
            int id = id(a.path("id"), nVocab, content);
            if (tokens[id] == null) {
                tokens[id] = content;
            } else if (!tokens[id].equals(content)) {
                throw new IllegalArgumentException("tokenizer.json: id " + id + " is both " + quote(tokens[id]) + " and " + quote(content));
            }
            addedIds.put(content, id);
            if (a.path("special").asBoolean(false) || TokenizerTables.looksSpecial(content)) {
                control.add(id);
            } else {
                userDefined.add(id);
            }
        }
        List<Object> tokenList = new ArrayList<>(nVocab);
        List<Object> types = new ArrayList<>(nVocab);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < nVocab; i++) {
            TokenizerTables.TokenType type;
            if (tokens[i] == null) {
                tokens[i] = "[PAD" + i + "]";
                type = TokenizerTables.TokenType.UNUSED;
            } else if (control.contains(i)) {
                type = TokenizerTables.TokenType.CONTROL;
            } else if (userDefined.contains(i)) {
                type = TokenizerTables.TokenType.USER_DEFINED;
            } else if (model == TokenizerTables.TokenizerModel.LLAMA && TokenizerTables.isByteToken(tokens[i])) {
                type = TokenizerTables.TokenType.BYTE;
            } else {
                type = TokenizerTables.TokenType.NORMAL;
            }
            if (!seen.add(tokens[i])) {
                throw new IllegalArgumentException("tokenizer.json: duplicate token string " + quote(tokens[i]));
            }
            tokenList.add(tokens[i]);
            types.add(type.id());
        }
        List<String> merges = merges(tokenizer.path("model").path("merges"));
        List<GgufKv> out = new ArrayList<>();
        out.add(kv("tokenizer.ggml.model", GgufValueType.STRING, model.ggufName()));
        if (model == TokenizerTables.TokenizerModel.GPT2) {
            TokenizerTables.PreTokenizer pre = TokenizerTables.PreTokenizer.fromHf(tokenizer.path("pre_tokenizer"))
                    .orElseThrow(() -> new IllegalArgumentException("tokenizer.json: pre-tokenizer not recognized "
                            + "(llama.cpp knows it only by its regex; supported: llama-bpe, qwen2, qwen35, gpt-2)"));
            out.add(kv(TokenizerTables.PRE, GgufValueType.STRING, pre.ggufName()));
        } else {
            out.add(kv(TokenizerTables.PRE, GgufValueType.STRING, "default"));   // the converter's SentencePiece readers
        }
        out.add(kv("tokenizer.ggml.tokens", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, tokenList)));
        if (model == TokenizerTables.TokenizerModel.LLAMA) {
            out.add(kv("tokenizer.ggml.scores", GgufValueType.ARRAY, new GgufArray(GgufValueType.FLOAT32, scores(tokens, merges, vocab))));
        }
        out.add(kv("tokenizer.ggml.token_type", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, types)));
        if (model == TokenizerTables.TokenizerModel.GPT2) {
            out.add(kv("tokenizer.ggml.merges", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, new ArrayList<>(merges))));
        }
        specials(tokenizer, tokenizerConfig, config, addedIds, nVocab, out);
        chatTemplate(tokenizerConfig).ifPresent(t -> out.add(kv(TokenizerTables.CHAT_TEMPLATE, GgufValueType.STRING, t)));
        return List.copyOf(out);
    }

    /**
     * The special-token ids and add flags, as gguf-py's {@code SpecialVocab} derives them: tokenizer.json's
     * post-processor first (TemplateProcessing: a leading special token sets add_bos (and names the bos token when
     * tokenizer_config.json does not), a trailing one add_eos, a separator between A and B in the pair template
     * add_sep; RobertaProcessing: all three), then {@code tokenizer_config.json}'s {@code add_<type>_token}, then
     * each role's id: the first added token with tokenizer_config.json's content, else config.json's
     * {@code <type>_token_id} below {@code nVocab}.
     */
    private static void specials(JsonNode tokenizer, JsonNode tc, JsonNode config, Map<String, Integer> addedIds, int nVocab, List<GgufKv> out) {
        Map<String, String> content = new HashMap<>();
        for (String typ : SPECIAL_TYPES) {
            JsonNode e = tc == null ? null : tc.get(typ + "_token");
            if (e != null && e.isObject()) {
                e = e.get("content");
            }
            if (e != null && e.isTextual()) {
                content.put(typ, e.asText());
            }
        }
        Map<String, Boolean> add = new HashMap<>();
        templateAdds(tokenizer.path("post_processor"), tc != null, content, add);
        for (String typ : List.of("bos", "eos", "sep")) {
            JsonNode e = tc == null ? null : tc.get("add_" + typ + "_token");
            if (e != null && e.isBoolean()) {
                add.put(typ, e.asBoolean());
            }
        }
        for (TokenizerTables.SpecialToken s : TokenizerTables.SpecialToken.values()) {
            String typ = s.hfField().replace("_token", "");
            Integer id = tc != null && content.containsKey(typ) ? addedIds.get(content.get(typ)) : null;
            if (id == null && config != null && config.path(typ + "_token_id").isIntegralNumber()) {
                long cid = config.path(typ + "_token_id").asLong();
                id = cid >= 0 && cid < nVocab ? (int) cid : null;
            }
            if (id != null) {
                out.add(kv(s.ggufKey(), GgufValueType.UINT32, id));
            }
        }
        for (Map.Entry<String, String> a : Map.of("bos", TokenizerTables.ADD_BOS, "sep", TokenizerTables.ADD_SEP,
                "eos", TokenizerTables.ADD_EOS).entrySet().stream().sorted(Map.Entry.comparingByKey()).toList()) {
            if (add.containsKey(a.getKey())) {
                out.add(kv(a.getValue(), GgufValueType.BOOL, add.get(a.getKey())));
            }
        }
    }

    /** add_bos/add_eos/add_sep implied by the post-processor (gguf-py's {@code SpecialVocab._try_load_from_tokenizer_json}). */
    private static void templateAdds(JsonNode pp, boolean haveConfig, Map<String, String> content, Map<String, Boolean> add) {
        List<JsonNode> procs = new ArrayList<>();
        if (pp.has("processors")) {
            pp.path("processors").forEach(procs::add);
        } else {
            procs.add(pp);
        }
        for (JsonNode p : procs) {
            String type = p.path("type").asText();
            if ("RobertaProcessing".equals(type)) {
                add.put("bos", true);
                add.put("eos", true);
                add.put("sep", true);
                continue;
            }
            if (!"TemplateProcessing".equals(type)) {
                continue;
            }
            JsonNode single = p.path("single");
            String first = null;
            String last = null;
            if (single.size() > 1) {
                first = specialId(single.get(0));
                if (first != null) {
                    if (!haveConfig || !content.containsKey("bos") && !first.equals(content.get("cls"))) {
                        content.put("bos", first);
                    }
                    add.put("bos", first.equals(content.get("bos")) || first.equals(content.get("cls")));
                }
                last = specialId(single.get(single.size() - 1));
                if (last != null) {
                    if (!haveConfig) {
                        content.put("eos", last);
                    }
                    add.put("eos", last.equals(content.get("eos")));
                }
            }
            separator(p.path("pair"), first, last, content, add);
        }
    }

    /** A separator in the pair template between sequences A and B ({@code A [sep] [eos] B}) sets add_sep. */
    private static void separator(JsonNode pair, String first, String last, Map<String, String> content, Map<String, Boolean> add) {
        int start = first != null && pair.size() > 0 && first.equals(specialId(pair.get(0))) ? 1 : 0;
        int stop = last != null && pair.size() > 0 && last.equals(specialId(pair.get(pair.size() - 1))) ? pair.size() - 1 : pair.size();
        if (stop - start < 3) {
            return;
        }
        String a = pair.get(start).path("Sequence").path("id").asText(null);
        String b = pair.get(stop - 1).path("Sequence").path("id").asText(null);
        if (!"A".equals(a) || !"B".equals(b)) {
            return;
        }
        boolean sep = false;
        String e0 = specialId(pair.get(start + 1));
        if (e0 != null && isSepOrEos(e0, content) && last == null) {
            sep = true;
        }
        if (stop - start == 4) {
            String e1 = specialId(pair.get(start + 2));
            if (e1 != null && isSepOrEos(e1, content)) {
                sep = true;
            }
        }
        add.put("sep", sep);
    }

    private static boolean isSepOrEos(String token, Map<String, String> content) {
        return token.equals(content.get("sep")) || token.equals(content.get("eos"));
    }

    private static String specialId(JsonNode piece) {
        return piece.path("SpecialToken").path("id").asText(null);
    }

    /** {@code chat_template}: a string, or the {@code default} entry of a list of {name, template}. */
    static Optional<String> chatTemplate(JsonNode tc) {
        JsonNode t = tc == null ? null : tc.get("chat_template");
        if (t == null) {
            return Optional.empty();
        }
        if (t.isTextual()) {
            return Optional.of(t.asText());
        }
        for (JsonNode e : t) {
            if ("default".equals(e.path("name").asText()) && e.path("template").isTextual()) {
                return Optional.of(e.path("template").asText());
            }
        }
        return Optional.empty();
    }

    /** Merges as {@code "a b"} strings (pairs given as arrays joined as gguf-py does). */
    static List<String> merges(JsonNode m) {
        List<String> out = new ArrayList<>();
        for (JsonNode e : m) {
            if (e.isTextual()) {
                out.add(e.asText());
            } else if (e.isArray() && e.size() == 2 && e.get(0).isTextual() && e.get(1).isTextual()) {
                out.add(spaces(e.get(0).asText()) + " " + spaces(e.get(1).asText()));
            } else {
                throw new IllegalArgumentException("tokenizer.json: malformed merge " + e);
            }
        }
        return out;
    }

    private static String spaces(String part) {
        return part.replace(' ', (char) (' ' + 256));
    }

    private static List<Object> scores(String[] tokens, List<String> merges, Map<String, Integer> vocab) {
        float[] s = new float[tokens.length];
        for (int rank = merges.size() - 1; rank >= 0; rank--) {
            String m = merges.get(rank);
            int sp = m.indexOf(' ');
            if (sp < 0) {
                continue;
            }
            Integer id = vocab.get(m.substring(0, sp) + m.substring(sp + 1));
            if (id != null) {
                s[id] = -(rank + 1);
            }
        }
        List<Object> out = new ArrayList<>(s.length);
        for (float f : s) {
            out.add(f);
        }
        return out;
    }

    private static int id(JsonNode n, int nVocab, String token) {
        if (!n.isIntegralNumber() || !n.canConvertToInt() || n.intValue() < 0) {
            throw new IllegalArgumentException("tokenizer.json: token " + quote(token) + " has id " + n);
        }
        if (n.intValue() >= nVocab) {
            throw new IllegalArgumentException("tokenizer.json: token id " + n.intValue() + " does not fit vocab_size " + nVocab);
        }
        return n.intValue();
    }

    private static void place(String[] tokens, int id, String token) {
        if (tokens[id] != null) {
            throw new IllegalArgumentException("tokenizer.json: id " + id + " is both " + quote(tokens[id]) + " and " + quote(token));
        }
        tokens[id] = token;
    }

    private static String quote(String s) {
        return dev.modelfs.format.Quoting.quote(s.length() > 40 ? s.substring(0, 40) + "..." : s);
    }

    private static GgufKv kv(String key, GgufValueType type, Object value) {
        return new GgufKv(key, type, value, 0, 0);
    }
}
