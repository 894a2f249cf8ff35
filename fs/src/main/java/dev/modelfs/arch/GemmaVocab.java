package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * What the Gemma architectures (1, 2, 3) share. Tokenizer: Gemma's SentencePiece model has no dummy prefix, so
 * llama.cpp's converter gives a SentencePiece-style vocabulary ({@code tokenizer.ggml.model = llama})
 * {@code tokenizer.ggml.add_space_prefix = false} (llama.cpp's default, true, would put a {@code ▁} token before
 * every prompt); a byte-level vocabulary gets nothing (the converter's Gemma 3 reads one as GPT-2 BPE).
 * Gemma 1 and 2: the checks and {@code config.json} fields both have (docs/FORMATS.md §7.3-§7.5).
 */
final class GemmaVocab {
    private GemmaVocab() {
    }

    /** The Gemma tokenizer KVs for a vocabulary of this model. */
    static List<GgufKv> extras(TokenizerTables.TokenizerModel model) {
        if (model != TokenizerTables.TokenizerModel.LLAMA) {
            return List.of();
        }
        return List.of(new GgufKv(TokenizerTables.ADD_SPACE_PREFIX, GgufValueType.BOOL, false, 0, 0));
    }

    /** Refuses a Gemma 1/2 config llama.cpp would run differently: no head_dim, rope scaling, untied embeddings, another activation. */
    /** Refuses a {@code query_pre_attn_scalar} other than the {@code scalar} llama.cpp's {@code arch} assumes (a GGUF does not store it). */
    static void checkQueryScalar(String arch, JsonNode c, int scalar) {
        if (!c.path("query_pre_attn_scalar").isNumber() || c.path("query_pre_attn_scalar").doubleValue() != scalar) {
            throw new IllegalArgumentException(arch + " query_pre_attn_scalar " + c.path("query_pre_attn_scalar")
                    + " is not the " + scalar + " llama.cpp assumes");
        }
    }

    static void checkCommon(String arch, JsonNode c) {
        if (!c.hasNonNull("head_dim")) {
            throw new IllegalArgumentException(arch + " config.json without head_dim");
        }
        if (ConfigKeys.ropeScaling(c).filter(r -> !r.type().equals("default")).isPresent()) {
            throw new IllegalArgumentException(arch + " rope scaling is not supported by llama.cpp's " + arch);
        }
        if (c.path("tie_word_embeddings").isBoolean() && !c.path("tie_word_embeddings").asBoolean()) {
            throw new IllegalArgumentException(arch + " with untied embeddings (llama.cpp's " + arch + " reads the output from token_embd)");
        }
        String act = c.path("hidden_activation").asText(c.path("hidden_act").asText("gelu_pytorch_tanh"));
        if (!act.equals("gelu_pytorch_tanh") && !act.equals("gelu")) {   // transformers runs Gemma's legacy "gelu" as the tanh form
            throw new IllegalArgumentException(arch + " hidden_activation " + act + " (llama.cpp runs tanh-approximated GELU)");
        }
    }

    /** The fields of a rebuilt Gemma 1/2 {@code config.json} beyond the common ones. */
    static void completeCommon(ObjectNode c) {
        c.remove("hidden_act");
        c.put("hidden_activation", "gelu_pytorch_tanh");
        if (!c.has("rope_theta")) {
            c.put("rope_theta", 10000.0);
        }
        c.put("attention_bias", false);
        c.put("tie_word_embeddings", true);
    }

    /** The shortest decimal that reads back as the same f32 (GGUF floats are f32). */
    static double shortest(double v) {
        return Double.parseDouble(Float.toString((float) v));
    }
}
