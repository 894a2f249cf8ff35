package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;

/**
 * Gemma 3 text ({@code Gemma3ForCausalLM}, 1B and the text part of 4B and larger): q/k norms, four norms a
 * layer, NeoX rope; llama.cpp stores every norm weight as {@code 1 + w} ({@link #normShift}).
 *
 * <p>HF → GGUF, as llama.cpp's converter ({@code Gemma3Model.set_gguf_parameters}) writes them and its
 * {@code gemma3} loader reads them: {@code rope.freq_base} (global layers; default 1e6),
 * {@code rope.freq_base_swa} (local layers), {@code attention.sliding_window}, {@code final_logit_softcapping};
 * linear rope scaling of the global layers (4B and larger: {@code rope_parameters.full_attention} or the
 * legacy {@code rope_scaling}) as {@code rope.scaling.type/factor} ({@link ConfigKeys#toGguf}); llama.cpp
 * applies it to the global layers only, as transformers does. Refused: layer types other than llama.cpp's
 * fixed pattern (every 6th layer global), a query scale other than the one llama.cpp assumes, attention logit
 * soft-capping, rope scaling other than linear, no {@code head_dim}, and a {@code tokenizer.json} whose
 * vocabulary plus added tokens are fewer than {@code vocab_size} (llama.cpp's converter then drops embedding
 * rows; modelfs does not).
 *
 * <p>GGUF → HF: sliding-window layers every layer but each {@code sliding_window_pattern}-th (default 6) when
 * {@code attention.sliding_window > 0}, else none; local rope base {@code rope.freq_base_swa}, else
 * {@code rope.local.freq_base} (Ollama's key), else 10000; global base {@code rope.freq_base}, else
 * {@code rope.global.freq_base}, else 1e6; the query scale llama.cpp uses ({@code 1/sqrt(head_dim)},
 * {@code 1/sqrt(hidden/heads)} for the 62-layer 27B), which a GGUF does not store, as
 * {@code query_pre_attn_scalar}. A layer pattern given per layer (a BOOL array, true = sliding window, as Ollama's
 * converter writes it) gives {@code layer_types} directly; one of another length, or a period that is not positive, is refused.
 */
public final class Gemma3 implements ArchSpec {
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION, Layers.QK_NORMS,
            Layers.SANDWICH_NORMS, Layers.DENSE_MLP);
    private static final Tables TABLES = new Tables("gemma3", List.of("Gemma3ForCausalLM"), List.of("gemma3_text"), LAYERS);
    private static final int PATTERN = 6;

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public float normShift() {
        return 1f;
    }

    /** With a SentencePiece-style vocabulary, {@code add_space_prefix = false} (Gemma's tokenizer adds no dummy prefix). */
    @Override
    public List<GgufKv> tokenizerExtras(TokenizerTables.TokenizerModel model, int nVocab) {
        return GemmaVocab.extras(model);
    }

    @Override
    public List<GgufKv> extraKvs(JsonNode c, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        List<GgufKv> out = new ArrayList<>();
        if (!c.hasNonNull("head_dim")) {
            throw new IllegalArgumentException("gemma3 config.json without head_dim");
        }
        GemmaVocab.checkQueryScalar("gemma3", c, d.layers() == 62 ? d.hidden() / d.heads() : d.headDim());
        if (c.hasNonNull("attn_logit_softcapping")) {
            throw new IllegalArgumentException("gemma3 attn_logit_softcapping is not supported by llama.cpp");
        }
        String rt = ConfigKeys.ropeScaling(c).map(ConfigKeys.RopeScaling::type).orElse("default");
        if (!rt.equals("default") && !rt.equals("linear")) {
            throw new IllegalArgumentException("gemma3 rope scaling " + rt + " of the global layers is not mapped (linear is)");
        }
        if (done.stream().noneMatch(k -> k.key().equals(p + "rope.freq_base"))) {
            out.add(new GgufKv(p + "rope.freq_base", GgufValueType.FLOAT32, 1000000f, 0, 0));
        }
        ConfigKeys.field(c, List.of("rope_parameters.sliding_attention.rope_theta", "rope_local_base_freq"))
                .ifPresent(v -> out.add(new GgufKv(p + "rope.freq_base_swa", GgufValueType.FLOAT32, (float) v.doubleValue(), 0, 0)));
        JsonNode window = c.path("sliding_window");
        boolean swa = window.isIntegralNumber() && window.intValue() > 0;
        if (swa) {
            out.add(new GgufKv(p + "attention.sliding_window", GgufValueType.UINT32, window.intValue(), 0, 0));
        }
        JsonNode types = c.path("layer_types");
        for (int i = 0; types.isArray() && i < types.size(); i++) {
            String want = swa && (i + 1) % PATTERN != 0 ? "sliding_attention" : "full_attention";
            if (!want.equals(types.get(i).asText())) {
                throw new IllegalArgumentException("gemma3 layer_types[" + i + "] = " + types.get(i)
                        + ": llama.cpp's gemma3 makes every 6th layer global, the others sliding");
            }
        }
        if (types.isArray() && types.size() != d.layers()) {
            throw new IllegalArgumentException("gemma3 layer_types has " + types.size() + " entries, not " + d.layers());
        }
        JsonNode cap = c.path("final_logit_softcapping");
        if (cap.isNumber() && cap.doubleValue() != 0) {
            out.add(new GgufKv(p + "final_logit_softcapping", GgufValueType.FLOAT32, (float) cap.doubleValue(), 0, 0));
        }
        return out;
    }

    /**
     * llama.cpp's converter cuts {@code token_embd} of a Gemma 3 without {@code tokenizer.model} to
     * {@code len(model.vocab) + len(added_tokens)} rows (a SentencePiece-derived tokenizer.json lists its added
     * tokens in both, so this count exceeds the distinct ids and usually cuts nothing); modelfs keeps every
     * row, so a count below {@code vocab_size} is refused. Ids the tokenizer does not list become
     * {@code [PAD<id>]} tokens, as the converter's.
     */
    @Override
    public void checkTokenizer(JsonNode tokenizer, ConfigKeys.Dims d) {
        int count = tokenizer.path("model").path("vocab").size() + tokenizer.path("added_tokens").size();
        if (count < d.vocab()) {
            throw new IllegalArgumentException("gemma3: tokenizer.json has " + count + " tokens (vocabulary plus added), vocab_size is "
                    + d.vocab() + " (llama.cpp's converter drops the extra embedding rows; modelfs does not)");
        }
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        c.remove("hidden_act");
        int layers = (int) (long) m.integer(p + "block_count", 0L);
        long window = m.integer(p + "attention.sliding_window", 0L);
        String key = p + "attention.sliding_window_pattern";
        boolean[] local = m.isArray(key) ? m.bools(key) : null;   // Ollama's converter: per layer, true = sliding window
        if (local != null && local.length != layers) {
            throw new IllegalArgumentException(key + " has " + local.length + " entries for " + layers + " layers");
        }
        long every = local != null ? 0 : m.integer(key, (long) PATTERN);
        if (local == null && every <= 0) {
            throw new IllegalArgumentException(key + " = " + every + " is not positive");
        }
        ArrayNode types = c.putArray("layer_types");
        for (int i = 0; i < layers; i++) {
            boolean sliding = local != null ? local[i] : (i + 1) % every != 0;
            types.add(window > 0 && sliding ? "sliding_attention" : "full_attention");
        }
        if (window > 0) {
            c.put("sliding_window", window);
            if (local == null) {
                c.put("sliding_window_pattern", every);
            }
        } else {
            c.putNull("sliding_window");
        }
        // llama.cpp's converter: rope.freq_base / rope.freq_base_swa; Ollama's: rope.global / rope.local.freq_base
        c.put("rope_local_base_freq", shortest(m.real(p + "rope.freq_base_swa", m.real(p + "rope.local.freq_base", 10000.0))));
        if (!c.has("rope_theta")) {
            c.put("rope_theta", shortest(m.real(p + "rope.global.freq_base", 1000000.0)));
        }
        c.put("query_pre_attn_scalar", layers == 62 ? hidden / heads : headDim);
        double cap = m.real(p + "final_logit_softcapping", 0.0);
        if (cap != 0) {
            c.put("final_logit_softcapping", shortest(cap));
        } else {
            c.putNull("final_logit_softcapping");
        }
        c.putNull("attn_logit_softcapping");
        c.put("hidden_activation", "gelu_pytorch_tanh");
        c.put("attention_bias", false);
    }

    /** The shortest decimal that reads back as the same f32 (GGUF floats are f32). */
    private static double shortest(double v) {
        return GemmaVocab.shortest(v);
    }
}
