package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The Hugging Face → GGUF direction of {@link Gemma4} (the synthesized {@code model.gguf} of a Gemma 4 text model as
 * Ollama's {@code x/create} stores it), as llama.cpp's converter ({@code Gemma4Model} over {@code Gemma3Model})
 * writes it (docs/FORMATS.md §7.5): sliding layers of {@code head_dim}, full-attention layers of {@code global_head_dim}
 * (or {@code per_layer_config}'s head dimension of the first full layer), the layer pattern as a BOOL array, "proportional"
 * rope of the full layers as {@code rope_freqs.weight} (1 for each rotated pair, 1e30 for the others), and the
 * vocabulary as the converter's {@code LlamaHfVocab} reads {@code tokenizer.json} ({@code tokenizer.ggml.model = gemma4},
 * merges, every score -1000, no {@code tokenizer.ggml.pre}).
 *
 * <p>The routed experts of 26B-A4B are {@link Gemma4Experts}'s; per-layer embeddings, KV sharing and double-wide MLPs
 * (E2B/E4B) are {@link Gemma4PerLayer}'s.
 *
 * <p>Keys shared with values and the full layers' own KV-head count (26B-A4B, 31B) are {@link Gemma4KvHeads}'s.
 *
 * <p>Refused with a one-line reason (llama.cpp or this mapping would run them differently): layer types that are not sliding/full per layer, a full-attention rope other than proportional, partial rotation
 * of the sliding layers, an activation other than tanh-approximated GELU, untied embeddings, attention logit soft-capping.
 * Stateless.
 */
final class Gemma4Synth {
    private Gemma4Synth() {
    }

    /** Tokens llama.cpp's converter makes USER_DEFINED so that they are always rendered (its {@code visible_tokens}). */
    private static final Set<String> VISIBLE = Set.of("<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>",
            "<|tool_response>", "<tool_response|>", "<|\"|>");
    /** What llama.cpp's converter writes for a pair the full-attention layers leave unrotated. */
    static final float UNROTATED = 1e30f;

    static void checkHfConfig(JsonNode c) {
        Gemma4Experts.checkHfConfig(c);
        refuseIf(c.hasNonNull("attn_logit_softcapping"), "attention logit soft-capping");
        refuseIf(!c.path("tie_word_embeddings").asBoolean(true), "untied embeddings");
        String act = c.path("hidden_activation").asText(c.path("hidden_act").asText("gelu_pytorch_tanh"));
        refuseIf(!act.equals("gelu_pytorch_tanh"), "hidden_activation " + act + " (llama.cpp runs tanh-approximated GELU)");
        for (Iterator<Map.Entry<String, JsonNode>> it = c.path("per_layer_config").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            for (Iterator<String> f = e.getValue().fieldNames(); f.hasNext(); ) {
                String field = f.next();
                refuseIf(!field.equals("head_dim") && !field.equals("num_key_value_heads"),
                        "per_layer_config." + e.getKey() + "." + field + " (only head_dim and num_key_value_heads are mapped)");
            }
        }
        JsonNode types = c.path("layer_types");
        refuseIf(!types.isArray() || types.size() != c.path("num_hidden_layers").asInt(-1), "layer_types missing or not one per layer");
        for (JsonNode t : types) {
            refuseIf(!t.asText().equals("sliding_attention") && !t.asText().equals("full_attention"), "layer type " + t);
        }
        Gemma4KvHeads.checkHfConfig(c);
        JsonNode full = c.at("/rope_parameters/full_attention");
        refuseIf(!"proportional".equals(full.path("rope_type").asText()), "full-attention rope " + full.path("rope_type")
                + " (llama.cpp's converter writes proportional rope)");
        double prf = full.path("partial_rotary_factor").asDouble(-1);
        refuseIf(!(prf > 0 && prf <= 1), "full-attention partial_rotary_factor " + full.path("partial_rotary_factor"));
        JsonNode swa = c.at("/rope_parameters/sliding_attention");
        refuseIf(!"default".equals(swa.path("rope_type").asText("default")) || swa.path("partial_rotary_factor").asDouble(1) != 1,
                "sliding-attention rope other than full default rotation");
        refuseIf(!c.path("sliding_window").isIntegralNumber() || c.path("sliding_window").asInt() <= 0, "no positive sliding_window");
        globalHeadDim(c);
        Gemma4PerLayer.checkHfConfig(c);
    }

    /** The full-attention layers' head dimension: {@code global_head_dim}, else {@code per_layer_config}'s of the first full layer. */
    static int globalHeadDim(JsonNode c) {
        JsonNode g = c.get("global_head_dim");
        if (g != null && g.isIntegralNumber() && g.asInt() > 0) {
            return g.asInt();
        }
        JsonNode types = c.path("layer_types");
        for (int i = 0; i < types.size(); i++) {
            JsonNode h = c.path("per_layer_config").path(Integer.toString(i)).path("head_dim");
            if (types.get(i).asText().equals("full_attention") && h.isIntegralNumber() && h.asInt() > 0) {
                return h.asInt();
            }
        }
        throw new IllegalArgumentException("gemma4 config.json names no global_head_dim (nor a per_layer_config head_dim of a full layer)");
    }

    static boolean sliding(JsonNode c, int layer) {
        return c.path("layer_types").path(layer).asText().equals("sliding_attention");
    }

    static List<GgufKv> extraKvs(JsonNode c, String p, ConfigKeys.Dims d) {
        int global = globalHeadDim(c);
        List<GgufKv> out = new ArrayList<>();
        out.add(u32(p + "attention.key_length", global));
        out.add(u32(p + "attention.value_length", global));
        ConfigKeys.field(c, List.of("rope_parameters.sliding_attention.rope_theta"))
                .ifPresent(v -> out.add(new GgufKv(p + "rope.freq_base_swa", GgufValueType.FLOAT32, (float) v.doubleValue(), 0, 0)));
        JsonNode cap = c.path("final_logit_softcapping");
        if (cap.isNumber() && cap.doubleValue() != 0) {
            out.add(new GgufKv(p + "final_logit_softcapping", GgufValueType.FLOAT32, (float) cap.doubleValue(), 0, 0));
        }
        out.add(u32(p + "attention.sliding_window", c.path("sliding_window").asInt()));
        out.addAll(Gemma4PerLayer.extraKvs(c, p, d));
        List<Object> pattern = new ArrayList<>();
        for (int i = 0; i < d.layers(); i++) {
            pattern.add(sliding(c, i));
        }
        out.add(new GgufKv(p + "attention.sliding_window_pattern", GgufValueType.ARRAY, new GgufArray(GgufValueType.BOOL, pattern), 0, 0));
        out.add(u32(p + "attention.key_length_swa", d.headDim()));
        out.add(u32(p + "attention.value_length_swa", d.headDim()));
        out.add(u32(p + "rope.dimension_count", global));
        out.add(u32(p + "rope.dimension_count_swa", d.headDim()));
        out.addAll(Gemma4Experts.extraKvs(c, p));
        out.addAll(Gemma4KvHeads.extraKvs(c, p, d.layers()));
        return out;
    }

    /** {@code rope_freqs.weight}: {@code int(global * partial_rotary_factor / 2)} ones, then 1e30 up to {@code global / 2}. */
    static float[] ropeFreqs(JsonNode c) {
        int global = globalHeadDim(c);
        double prf = c.at("/rope_parameters/full_attention/partial_rotary_factor").asDouble();
        int rotated = (int) (global * prf / 2);
        float[] f = new float[global / 2];
        Arrays.fill(f, UNROTATED);
        Arrays.fill(f, 0, rotated, 1f);
        return f;
    }

    /** The HF shape of per-layer tensor {@code gguf} of {@code layer}: the rules' with the full layers' head dimension there. */
    static Optional<long[]> layerShape(List<LayerRule> rules, String gguf, int layer, JsonNode c, ConfigKeys.Dims d) {
        if (Gemma4Experts.owns(gguf)) {
            return Gemma4Experts.layerShape(gguf, c, d);
        }
        if (gguf.equals("layer_output_scale")) {
            return Optional.of(new long[] {1});
        }
        Optional<long[]> perLayer = Gemma4PerLayer.layerShape(gguf, layer, c, d);
        if (perLayer.isPresent()) {
            return perLayer;
        }
        ConfigKeys.Dims ld = sliding(c, layer) ? d : new ConfigKeys.Dims(d.hidden(), d.layers(), d.heads(), Gemma4KvHeads.kv(c, layer), globalHeadDim(c),
                d.vocab(), d.ff(), d.experts(), d.expertFf(), d.sharedFf());
        return rules.stream().filter(r -> r.gguf().equals(gguf)).findFirst().map(r -> r.shape().apply(ld));
    }

    /**
     * The converter's Gemma 4 vocabulary from the generic KVs: {@code tokenizer.ggml.model = gemma4} and no {@code pre}; every
     * score -1000; the token types as {@code LlamaHfVocab} gives them ({@link #tokenTypes}); the merges after the token
     * types; {@code add_space_prefix = false} and {@code add_bos_token = true} last. A tokenizer that is not a byte-fallback
     * BPE is refused (the converter's {@code LlamaHfVocab} reads no other).
     */
    static List<GgufKv> tokenizerKvs(List<GgufKv> kvs, JsonNode tokenizer, JsonNode tokenizerConfig) {
        if (!"BPE".equals(tokenizer.path("model").path("type").asText()) || !tokenizer.path("model").path("byte_fallback").asBoolean(false)) {
            throw new IllegalArgumentException("gemma4: tokenizer.json is not a byte-fallback BPE (llama.cpp's converter reads Gemma 4's as one)");
        }
        List<GgufKv> out = new ArrayList<>();
        List<Object> tokens = null;
        for (GgufKv kv : kvs) {
            switch (kv.key()) {
                case "tokenizer.ggml.model" -> out.add(new GgufKv(kv.key(), GgufValueType.STRING, "gemma4", 0, 0));
                case TokenizerTables.PRE, TokenizerTables.ADD_BOS, TokenizerTables.ADD_SPACE_PREFIX -> {
                }
                case "tokenizer.ggml.tokens" -> {
                    tokens = ((GgufArray) kv.value()).values();
                    out.add(kv);
                }
                case "tokenizer.ggml.scores" -> out.add(new GgufKv(kv.key(), GgufValueType.ARRAY,
                        new GgufArray(GgufValueType.FLOAT32, new ArrayList<>(java.util.Collections.nCopies(((GgufArray) kv.value()).size(), -1000f))), 0, 0));
                case "tokenizer.ggml.token_type" -> {
                    List<Object> types = tokenTypes(((GgufArray) kv.value()).values(), tokens, tokenizer, tokenizerConfig);
                    out.add(new GgufKv(kv.key(), GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, types), 0, 0));
                    out.add(new GgufKv("tokenizer.ggml.merges", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING,
                            new ArrayList<>(TokenizerKvs.merges(tokenizer.path("model").path("merges")))), 0, 0));
                }
                default -> out.add(kv);
            }
        }
        out.add(new GgufKv(TokenizerTables.ADD_SPACE_PREFIX, GgufValueType.BOOL, false, 0, 0));
        out.add(new GgufKv(TokenizerTables.ADD_BOS, GgufValueType.BOOL, true, 0, 0));
        return out;
    }

    /**
     * The token types of {@code LlamaHfVocab}: an id of the model's vocabulary is BYTE ({@code <0xXX>}), else CONTROL when its
     * token is one of transformers' special tokens ({@code tokenizer_config.json}'s bos/eos/unk/sep/pad/cls/mask tokens and
     * {@code extra_special_tokens} / {@code additional_special_tokens}), else NORMAL; an added token outside the model's
     * vocabulary is CONTROL when special so, else USER_DEFINED; ids the tokenizer does not list keep their generic type
     * (UNUSED); the converter's visible tokens are USER_DEFINED whatever they were.
     */
    static List<Object> tokenTypes(List<Object> generic, List<Object> tokens, JsonNode tokenizer, JsonNode tc) {
        Set<String> special = new java.util.HashSet<>();
        if (tc != null) {
            for (String typ : List.of("bos", "eos", "unk", "sep", "pad", "cls", "mask")) {
                JsonNode e = tc.get(typ + "_token");
                JsonNode content = e != null && e.isObject() ? e.get("content") : e;
                if (content != null && content.isTextual()) {
                    special.add(content.asText());
                }
            }
            for (String list : List.of("extra_special_tokens", "additional_special_tokens")) {
                for (JsonNode e : tc.path(list)) {
                    JsonNode content = e.isObject() ? e.get("content") : e;
                    if (content != null && content.isTextual()) {
                        special.add(content.asText());
                    }
                }
            }
        }
        JsonNode vocab = tokenizer.path("model").path("vocab");
        List<Object> out = new ArrayList<>(generic);
        for (int i = 0; i < out.size(); i++) {
            String t = (String) tokens.get(i);
            int type = (Integer) generic.get(i);
            if (type == TokenizerTables.TokenType.UNUSED.id()) {
                continue;
            }
            if (VISIBLE.contains(t)) {
                type = TokenizerTables.TokenType.USER_DEFINED.id();
            } else if (vocab.has(t) && vocab.get(t).asInt() == i) {
                type = TokenizerTables.isByteToken(t) ? TokenizerTables.TokenType.BYTE.id()
                        : special.contains(t) ? TokenizerTables.TokenType.CONTROL.id() : TokenizerTables.TokenType.NORMAL.id();
            } else {
                type = special.contains(t) ? TokenizerTables.TokenType.CONTROL.id() : TokenizerTables.TokenType.USER_DEFINED.id();
            }
            out.set(i, type);
        }
        return out;
    }

    private static void refuseIf(boolean refused, String what) {
        if (refused) {
            throw new IllegalArgumentException("gemma4 " + what + " is not mapped to GGUF");
        }
    }

    private static GgufKv u32(String key, int v) {
        return new GgufKv(key, GgufValueType.UINT32, v, 0, 0);
    }
}
