package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import java.util.List;
import java.util.Optional;

/**
 * Gemma 4 text ({@code Gemma4ForCausalLM}, GGUF {@code gemma4}), both directions (Hugging Face → GGUF in
 * {@link Gemma4Synth}): sliding-window layers
 * with head dimension {@code attention.key_length_swa} and full-attention layers with {@code attention.key_length}
 * ({@code global_head_dim}), q/k norms and a weightless v norm, four norms a layer stored as they are (no
 * {@code 1 + w}), a per-layer output scalar ({@code blk.N.layer_output_scale.weight} ↔ the buffer
 * {@code model.layers.N.layer_scalar}), and "proportional" rope on the full-attention layers, which llama.cpp's
 * converter writes as {@code rope_freqs.weight} (1 for each rotated pair, 1e30 for the others): its count of
 * ones gives {@code partial_rotary_factor} (docs/FORMATS.md §7.3, §7.4).
 *
 * <p>Experts (26B-A4B) are {@link Gemma4Experts}'s: the routed block beside the dense MLP, in every layer or in none.
 *
 * <p>Per-layer embeddings, KV sharing and double-wide MLPs (E2B/E4B) are {@link Gemma4PerLayer}'s; keys shared with values
 * on the full layers (no {@code attn_v}) and their own KV-head count (a per-layer {@code head_count_kv}; 26B-A4B, 31B) are
 * {@link Gemma4KvHeads}'s.
 *
 * <p>Refused (one-line reasons): per-layer KV-head arrays other than one count for the sliding and one for the full layers,
 * feed-forward arrays other than double-wide MLPs', value and key lengths that differ, partial rotation of the
 * sliding layers, a layer pattern that is not a BOOL array of {@code block_count} entries, and a missing or
 * unreadable {@code rope_freqs.weight}. The rules' HF shapes are the sliding layers'; {@link #layerShape} gives the full
 * layers' ({@code global_head_dim}).
 */
public final class Gemma4 implements ArchSpec {
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION, Layers.QK_NORMS,
            Layers.SANDWICH_NORMS, Layers.DENSE_MLP, Gemma4Experts.LAYERS, Gemma4PerLayer.LAYERS);
    private static final Tables TABLES = new Tables("gemma4", List.of("Gemma4ForCausalLM"), List.of("gemma4_text"), LAYERS);
    private static final List<Assembly> ASSEMBLIES = Layers.of(List.of(Assembly.renamed("layer_scalar", "layer_output_scale.weight",
            Assembly.Layout.VECTOR)), Gemma4Experts.ASSEMBLIES);
    /** A rope frequency factor at least this large marks a pair llama.cpp leaves unrotated (the converter writes 1e30). */
    private static final double UNROTATED = 1e29;

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public List<Assembly> assemblies() {
        return ASSEMBLIES;
    }

    private static final List<String[]> GLOBALS = Layers.of(List.of(new String[] {"model.embed_tokens", "token_embd"},
            new String[] {"model.norm", "output_norm"}, new String[] {"lm_head", "output"}), Gemma4PerLayer.GLOBALS);

    /** The common globals and the per-layer-embedding ones ({@link Gemma4PerLayer}). */
    @Override
    public List<String[]> globals() {
        return GLOBALS;
    }

    // ---- Hugging Face → GGUF: Gemma4Synth

    /** The text of Gemma 4 with vision and audio: {@code text_config}, {@code model.language_model.*}; the towers left out. */
    private static final List<TextPart> TEXT_PARTS = List.of(new TextPart("Gemma4ForConditionalGeneration", "text_config",
            "model.language_model.", List.of("model.vision_tower.", "model.embed_vision.", "model.audio_tower.", "model.embed_audio.")));

    @Override
    public List<TextPart> textParts() {
        return TEXT_PARTS;
    }

    @Override
    public void checkHfConfig(JsonNode config) {
        Gemma4Synth.checkHfConfig(config);
    }

    @Override
    public boolean writesRopeScaling(String type) {
        return type.equals("proportional");
    }

    @Override
    public List<GgufKv> extraKvs(JsonNode config, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        return Gemma4Synth.extraKvs(config, p, d);
    }

    @Override
    public List<ComputedTensor> computedTensors(JsonNode config, List<GgufKv> kvs, ConfigKeys.Dims d) {
        return List.of(new ComputedTensor("rope_freqs.weight", Gemma4Synth.ropeFreqs(config)));
    }

    @Override
    public Optional<long[]> layerShape(String gguf, int layer, JsonNode config, ConfigKeys.Dims d) {
        return Gemma4Synth.layerShape(LAYERS, gguf, layer, config, d);
    }

    @Override
    public Optional<long[]> globalShape(String gguf, JsonNode config, ConfigKeys.Dims d) {
        return Gemma4PerLayer.globalShape(gguf, config, d);
    }

    @Override
    public List<String> requiredGlobals(JsonNode config) {
        return Gemma4PerLayer.requiredGlobals(config);
    }

    @Override
    public boolean mapsArrayKv(String ggufSuffix) {
        return Gemma4PerLayer.mapsArray(ggufSuffix) || ggufSuffix.equals(Gemma4KvHeads.KV);
    }

    /** As {@link Gemma3#checkTokenizer}: the converter cuts {@code token_embd} to the tokenizer's count; modelfs does not. */
    @Override
    public void checkTokenizer(JsonNode tokenizer, ConfigKeys.Dims d) {
        int count = tokenizer.path("model").path("vocab").size() + tokenizer.path("added_tokens").size();
        if (count < d.vocab()) {
            throw new IllegalArgumentException("gemma4: tokenizer.json has " + count + " tokens (vocabulary plus added), vocab_size is "
                    + d.vocab() + " (llama.cpp's converter drops the extra embedding rows; modelfs does not)");
        }
    }

    /** The dense layer's tensors, and the routed block's in a model with experts ({@link Gemma4Experts}). */
    @Override
    public List<String> requiredInLayer(int layer, JsonNode config) {
        List<String> base = ArchSpec.super.requiredInLayer(layer, config).stream()
                .filter(n -> !n.endsWith(".weight") || Gemma4PerLayer.requires(n.substring(0, n.length() - ".weight".length()), layer, config))
                .filter(n -> !n.equals("attn_v.weight") || Gemma4KvHeads.requiresV(layer, config))
                .toList();
        return Gemma4Experts.requiredInLayer(base, config);
    }

    @Override
    public List<GgufKv> reviseTokenizerKvs(List<GgufKv> kvs, JsonNode tokenizer, JsonNode tokenizerConfig) {
        return Gemma4Synth.tokenizerKvs(kvs, tokenizer, tokenizerConfig);
    }

    // ---- GGUF → Hugging Face

    /** The sliding layers' head dimension ({@code head_dim} in {@code config.json}). */
    @Override
    public int headDim(GgufParams m, String p, int hidden, int heads) {
        return (int) (long) m.integer(p + "attention.key_length_swa", m.integer(p + "attention.key_length", (long) hidden / heads));
    }

    @Override
    public List<HfConstant> hfConstants(GgufParams m, String p) {
        return Gemma4Experts.hfConstants(m, p, hfLayerPrefix());
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        Gemma4Experts.checkGguf(m, p);
        long global = m.integer(p + "attention.key_length", -1L), local = m.integer(p + "attention.key_length_swa", -1L);
        if (global <= 0 || local <= 0) {
            throw new IllegalArgumentException("gemma4 without positive " + p + "attention.key_length and key_length_swa");
        }
        if (m.integer(p + "attention.value_length", global) != global || m.integer(p + "attention.value_length_swa", local) != local) {
            throw new IllegalArgumentException("gemma4 value lengths differ from the key lengths");
        }
        if (m.integer(p + "rope.dimension_count_swa", local) != local || m.integer(p + "rope.dimension_count", global) != global) {
            throw new IllegalArgumentException("gemma4 rope dimension counts are not the head dimensions (partial rotation is given by rope_freqs)");
        }
        boolean[] sliding = pattern(m, p);
        Gemma4PerLayer.checkGguf(m, p, sliding);
        Gemma4KvHeads.checkGguf(m, p, sliding);
    }

    /** {@code attention.sliding_window_pattern}: per layer, whether it is a sliding-window layer. */
    private static boolean[] pattern(GgufParams m, String p) {
        long layers = m.integer(p + "block_count", 0L);
        boolean[] sliding = m.bools(p + "attention.sliding_window_pattern");
        if (sliding == null || sliding.length != layers) {
            throw new IllegalArgumentException("gemma4 " + p + "attention.sliding_window_pattern is not a BOOL array of " + layers + " entries");
        }
        return sliding;
    }

    /** Read in {@link #completeHfConfig} (partial rotation of the full-attention layers); not a rope scaling. */
    @Override
    public ObjectNode ropeScalingOf(GgufParams m, float[] freqs, int headDim) {
        return null;
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        int global = (int) (long) m.integer(p + "attention.key_length", 0L);
        float[] freqs = m.f32Vector("rope_freqs.weight");
        if (freqs == null || freqs.length != global / 2) {
            throw new IllegalArgumentException("gemma4 rope_freqs.weight " + (freqs == null ? "missing or unreadable" : "has " + freqs.length
                    + " values, not key_length / 2 = " + global / 2));
        }
        int rotated = 0;
        while (rotated < freqs.length && freqs[rotated] == 1f) {
            rotated++;
        }
        for (int i = rotated; i < freqs.length; i++) {
            if (!(freqs[i] >= UNROTATED)) {
                throw new IllegalArgumentException("gemma4 rope_freqs.weight[" + i + "] = " + freqs[i]
                        + ": not ones then unrotated pairs (proportional rope)");
            }
        }
        boolean[] sliding = pattern(m, p);
        c.remove("hidden_act");
        c.remove("rope_theta");
        c.put("global_head_dim", global);
        ArrayNode types = c.putArray("layer_types");
        for (boolean s : sliding) {
            types.add(s ? "sliding_attention" : "full_attention");
        }
        c.put("sliding_window", m.integer(p + "attention.sliding_window", 0L));
        ObjectNode rope = c.putObject("rope_parameters");
        rope.putObject("full_attention").put("rope_type", "proportional")
                .put("partial_rotary_factor", GemmaVocab.shortest(2.0 * rotated / global))
                .put("rope_theta", GemmaVocab.shortest(m.real(p + "rope.freq_base", 1_000_000.0)));
        rope.putObject("sliding_attention").put("rope_type", "default")
                .put("rope_theta", GemmaVocab.shortest(m.real(p + "rope.freq_base_swa", 10_000.0)));
        double cap = m.real(p + "final_logit_softcapping", 0.0);
        if (cap != 0) {
            c.put("final_logit_softcapping", GemmaVocab.shortest(cap));
        } else {
            c.putNull("final_logit_softcapping");
        }
        c.put("hidden_activation", "gelu_pytorch_tanh");
        c.put("vocab_size_per_layer_input", c.path("vocab_size").asLong());
        Gemma4PerLayer.completeHfConfig(c, m, p);
        Gemma4KvHeads.completeHfConfig(c, m, p, sliding);
        Gemma4Experts.completeHfConfig(c, m, p);
        c.put("attention_bias", false);
    }
}
