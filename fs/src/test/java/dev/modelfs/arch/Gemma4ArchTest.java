package dev.modelfs.arch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Gemma 4 text, GGUF → Hugging Face (docs/FORMATS.md §7.3, §7.4): names as llama.cpp's converter writes them,
 * the layer scalar as an assembly, the config rebuilt from the per-layer metadata and {@code rope_freqs}, and the
 * features it refuses.
 */
class Gemma4ArchTest {
    private static final String P = "gemma4.";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Gemma4 SPEC = (Gemma4) Architecture.GEMMA4.spec();

    /** A two-layer model's metadata (sliding then global, head dims 32 and 64) with {@code rope_freqs} of 8 rotated pairs of 32. */
    private static Map<String, Object> kvs() {
        Map<String, Object> kv = new HashMap<>(Map.of(P + "block_count", 2L, P + "attention.key_length", 64L,
                P + "attention.key_length_swa", 32L, P + "attention.value_length", 64L, P + "attention.value_length_swa", 32L,
                P + "attention.sliding_window", 8L, P + "rope.freq_base", 1_000_000.0, P + "rope.freq_base_swa", 10_000.0,
                P + "final_logit_softcapping", 30.0));
        kv.put(P + "embedding_length_per_layer_input", 0L);
        kv.put(P + "feed_forward_length", 128L);
        kv.put(P + "attention.sliding_window_pattern", new boolean[] {true, false});
        float[] freqs = new float[32];
        Arrays.fill(freqs, 1e30f);
        Arrays.fill(freqs, 0, 8, 1f);
        kv.put("rope_freqs.weight", freqs);
        return kv;
    }

    private static GgufParams params(Map<String, Object> kv, Set<String> tensors) {
        return new MapParams(kv, tensors);
    }

    private static final Set<String> V = Set.of("blk.0.attn_v.weight", "blk.1.attn_v.weight");

    @Test
    void namesAreLlamaCppsAndTheLayerScalarIsABuffer() {
        Architecture g = Architecture.GEMMA4;
        assertEquals(g, Architecture.fromGguf("gemma4", params(kvs(), V)).orElseThrow());
        assertEquals("model.layers.1.self_attn.q_norm.weight", TensorNames.toHf(g, "blk.1.attn_q_norm.weight").orElseThrow());
        assertEquals("model.layers.0.pre_feedforward_layernorm.weight", TensorNames.toHf(g, "blk.0.ffn_norm.weight").orElseThrow());
        assertEquals("model.layers.0.post_feedforward_layernorm.weight", TensorNames.toHf(g, "blk.0.post_ffw_norm.weight").orElseThrow());
        Assembly scalar = SPEC.assemblies().getFirst();
        assertEquals("layer_scalar", scalar.hf());
        assertEquals(List.of("layer_output_scale.weight"), scalar.gguf());
        assertTrue(scalar.isRename());
        assertEquals(0f, g.normShift(), "Gemma 4's norms scale by w, not 1 + w");
        assertEquals(32, SPEC.headDim(params(kvs(), V), P, 64, 4), "config.json's head_dim is the sliding layers'");
        var synth = assertThrows(IllegalArgumentException.class, () -> SPEC.checkHfConfig(JsonNodeFactory.instance.objectNode()));
        assertTrue(synth.getMessage().contains("layer_types"), synth.getMessage());
    }

    @Test
    void configComesFromThePatternTheHeadDimensionsAndRopeFreqs() {
        GgufParams m = params(kvs(), V);
        SPEC.checkGguf(m, P);
        assertNull(SPEC.ropeScalingOf(m, (float[]) kvs().get("rope_freqs.weight"), 32), "rope_freqs is no rope scaling");
        ObjectNode c = JsonNodeFactory.instance.objectNode().put("vocab_size", 560).put("rope_theta", 1e6).put("hidden_act", "silu");
        SPEC.completeHfConfig(c, m, P, 64, 4, 32);
        assertEquals(List.of("sliding_attention", "full_attention"), JSON.convertValue(c.get("layer_types"), List.class));
        assertEquals(64, c.get("global_head_dim").asInt());
        assertEquals(8, c.get("sliding_window").asInt());
        assertEquals("proportional", c.at("/rope_parameters/full_attention/rope_type").asText());
        assertEquals(0.25, c.at("/rope_parameters/full_attention/partial_rotary_factor").asDouble());
        assertEquals(1e6, c.at("/rope_parameters/full_attention/rope_theta").asDouble());
        assertEquals(1e4, c.at("/rope_parameters/sliding_attention/rope_theta").asDouble());
        assertEquals(30.0, c.get("final_logit_softcapping").asDouble());
        assertEquals(560, c.get("vocab_size_per_layer_input").asInt());
        assertEquals(0, c.get("hidden_size_per_layer_input").asInt());
        assertEquals(0, c.get("num_kv_shared_layers").asInt());
        assertFalse(c.get("use_double_wide_mlp").asBoolean(), "a scalar feed_forward_length");
        assertFalse(c.has("intermediate_size"), "ConfigKeys writes the scalar");
        assertFalse(c.has("rope_theta") || c.has("hidden_act"));
    }

    @Test
    void whatTheFolderWouldRunDifferentlyIsRefused() {
        for (var bad : List.<Map.Entry<String, Object>>of(Map.entry(P + "embedding_length_per_layer_input", 256L),
                Map.entry(P + "attention.shared_kv_layers", 1L), Map.entry(P + "expert_count", 4L),
                Map.entry(P + "attention.value_length", 32L), Map.entry(P + "rope.dimension_count_swa", 16L),
                Map.entry(P + "attention.sliding_window_pattern", new boolean[] {true}))) {
            Map<String, Object> kv = kvs();
            kv.put(bad.getKey(), bad.getValue());
            assertThrows(IllegalArgumentException.class, () -> SPEC.checkGguf(params(kv, V), P), bad.getKey());
        }
        var noSlidingV = assertThrows(IllegalArgumentException.class, () -> SPEC.checkGguf(params(kvs(), Set.of("blk.1.attn_v.weight")), P));
        assertTrue(noSlidingV.getMessage().contains("sliding layer 0 has no attn_v"), noSlidingV.getMessage());
        for (float[] freqs : new float[][] {null, new float[16], {1f, 2f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f,
            1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f,
            1e30f, 1e30f, 1e30f, 1e30f}}) {
            Map<String, Object> kv = kvs();
            kv.put("rope_freqs.weight", freqs);
            ObjectNode c = JsonNodeFactory.instance.objectNode();
            assertThrows(IllegalArgumentException.class, () -> SPEC.completeHfConfig(c, params(kv, V), P, 64, 4, 32));
        }
    }

    /** Gemma 4 E2B's form (4 layers, the last two sharing KV with double-wide MLPs, per-layer inputs of 8) as llama.cpp's converter writes it. */
    private static Map<String, Object> e2bKvs() {
        Map<String, Object> kv = kvs();
        kv.put(P + "block_count", 4L);
        kv.put(P + "attention.sliding_window_pattern", new boolean[] {true, false, true, false});
        kv.put(P + "embedding_length_per_layer_input", 8L);
        kv.put(P + "attention.shared_kv_layers", 2L);
        kv.put(P + "feed_forward_length", new int[] {128, 128, 256, 256});
        return kv;
    }

    private static Set<String> e2bTensors() {
        Set<String> t = new java.util.HashSet<>(Set.of("per_layer_token_embd.weight", "per_layer_model_proj.weight", "per_layer_proj_norm.weight",
                "blk.0.attn_v.weight", "blk.1.attn_v.weight"));
        for (int i = 0; i < 4; i++) {
            for (String n : List.of("inp_gate", "proj", "post_norm")) {
                t.add("blk." + i + "." + n + ".weight");
            }
        }
        return t;
    }

    @Test
    void perLayerEmbeddingsKvSharingAndDoubleWideMlpsComeBack() {
        Architecture g = Architecture.GEMMA4;
        assertEquals("model.embed_tokens_per_layer.weight", TensorNames.toHf(g, "per_layer_token_embd.weight").orElseThrow());
        assertEquals("model.per_layer_model_projection.weight", TensorNames.toHf(g, "per_layer_model_proj.weight").orElseThrow());
        assertEquals("model.per_layer_projection_norm.weight", TensorNames.toHf(g, "per_layer_proj_norm.weight").orElseThrow());
        assertEquals("model.layers.3.per_layer_input_gate.weight", TensorNames.toHf(g, "blk.3.inp_gate.weight").orElseThrow());
        assertEquals("model.layers.3.per_layer_projection.weight", TensorNames.toHf(g, "blk.3.proj.weight").orElseThrow());
        assertEquals("model.layers.3.post_per_layer_input_norm.weight", TensorNames.toHf(g, "blk.3.post_norm.weight").orElseThrow());
        assertEquals("per_layer_token_embd.weight", TensorNames.toGguf(g, "model.embed_tokens_per_layer.weight").orElseThrow());
        GgufParams m = params(e2bKvs(), e2bTensors());
        SPEC.checkGguf(m, P);   // layer 3 (full) has no attn_v: it shares layer 1's
        ObjectNode c = JsonNodeFactory.instance.objectNode().put("vocab_size", 560).put("intermediate_size", 0);
        SPEC.completeHfConfig(c, m, P, 64, 4, 32);
        assertEquals(8, c.get("hidden_size_per_layer_input").asInt());
        assertEquals(560, c.get("vocab_size_per_layer_input").asInt());
        assertEquals(2, c.get("num_kv_shared_layers").asInt());
        assertTrue(c.get("use_double_wide_mlp").asBoolean());
        assertEquals(128, c.get("intermediate_size").asInt(), "the unshared layers' width");
        Map<String, Object> same = e2bKvs();
        same.put(P + "feed_forward_length", new int[] {128, 128, 128, 128});
        ObjectNode c2 = JsonNodeFactory.instance.objectNode();
        SPEC.completeHfConfig(c2, params(same, e2bTensors()), P, 64, 4, 32);
        assertFalse(c2.get("use_double_wide_mlp").asBoolean());
        assertEquals(128, c2.get("intermediate_size").asInt());
    }

    @Test
    void perLayerFeaturesTheFolderWouldRunDifferentlyAreRefused() {
        List<Map.Entry<String, Object>> bad = List.of(
                Map.entry(P + "attention.sliding_window_pattern", new boolean[] {true, true, false, false}),   // llama.cpp: layer 2 reads 1
                Map.entry(P + "attention.shared_kv_layers", 3L),                                                // llama.cpp needs 2 own layers
                Map.entry(P + "feed_forward_length", new int[] {128, 256, 256, 256}),                          // not use_double_wide_mlp's
                Map.entry(P + "feed_forward_length", new int[] {128, 128, 256}));
        for (var b : bad) {
            Map<String, Object> kv = e2bKvs();
            kv.put(b.getKey(), b.getValue());
            assertThrows(IllegalArgumentException.class, () -> SPEC.checkGguf(params(kv, e2bTensors()), P), b.getKey());
        }
        Set<String> noGate = e2bTensors();
        noGate.remove("blk.2.inp_gate.weight");
        var e = assertThrows(IllegalArgumentException.class, () -> SPEC.checkGguf(params(e2bKvs(), noGate), P));
        assertTrue(e.getMessage().contains("blk.2.inp_gate.weight"), e.getMessage());
        Set<String> noV = e2bTensors();
        noV.remove("blk.0.attn_v.weight");
        e = assertThrows(IllegalArgumentException.class, () -> SPEC.checkGguf(params(e2bKvs(), noV), P));
        assertTrue(e.getMessage().contains("sliding layer 0 has no attn_v"), e.getMessage());
    }

    @Test
    void keysSharedWithValuesAndTheFullLayersKvHeadsComeBack() {   // 26B-A4B / 31B: no attn_v on full layers, head_count_kv [2, 1]
        Map<String, Object> kv = kvs();
        kv.put(P + "attention.head_count", 4L);
        kv.put(P + "attention.head_count_kv", new int[] {2, 1});
        GgufParams m = params(kv, Set.of("blk.0.attn_v.weight"));
        SPEC.checkGguf(m, P);
        ObjectNode c = JsonNodeFactory.instance.objectNode().put("vocab_size", 560).put("num_key_value_heads", 99);
        SPEC.completeHfConfig(c, m, P, 64, 4, 32);
        assertTrue(c.get("attention_k_eq_v").asBoolean());
        assertEquals(2, c.get("num_key_value_heads").asInt(), "the sliding layers' count");
        assertEquals(1, c.get("num_global_key_value_heads").asInt());
        ObjectNode plain = JsonNodeFactory.instance.objectNode().put("vocab_size", 560);
        SPEC.completeHfConfig(plain, params(kvs(), V), P, 64, 4, 32);
        assertFalse(plain.get("attention_k_eq_v").asBoolean());
        assertFalse(plain.has("num_global_key_value_heads"));
    }

    @Test
    void kvHeadArraysTheFolderWouldRunDifferentlyAreRefused() {
        for (var bad : List.<Map.Entry<int[], Set<String>>>of(
                Map.entry(new int[] {2, 1}, V),                          // own values: transformers ignores num_global_key_value_heads
                Map.entry(new int[] {2, 1, 1}, Set.of("blk.0.attn_v.weight")),   // not one entry a layer
                Map.entry(new int[] {0, 1}, Set.of("blk.0.attn_v.weight")))) {
            Map<String, Object> kv = kvs();
            kv.put(P + "attention.head_count_kv", bad.getKey());
            assertThrows(IllegalArgumentException.class, () -> SPEC.checkGguf(params(kv, bad.getValue()), P), Arrays.toString(bad.getKey()));
        }
        Map<String, Object> kv = kvs();
        kv.put(P + "block_count", 3L);
        kv.put(P + "attention.sliding_window_pattern", new boolean[] {true, false, false});
        kv.put(P + "attention.head_count_kv", new int[] {2, 1, 2});   // two counts for the full layers
        var e = assertThrows(IllegalArgumentException.class, () -> SPEC.checkGguf(params(kv, Set.of("blk.0.attn_v.weight")), P));
        assertTrue(e.getMessage().contains("head_count_kv"), e.getMessage());
        kv.remove(P + "attention.head_count_kv");
        var mixed = assertThrows(IllegalArgumentException.class,
                () -> SPEC.checkGguf(params(kv, Set.of("blk.0.attn_v.weight", "blk.1.attn_v.weight")), P));
        assertTrue(mixed.getMessage().contains("with and without attn_v"), mixed.getMessage());
        var arr = new dev.modelfs.format.gguf.GgufKv("gemma4.attention.head_count_kv", dev.modelfs.format.gguf.GgufValueType.ARRAY,
                new dev.modelfs.format.gguf.GgufArray(dev.modelfs.format.gguf.GgufValueType.INT32, List.of(2, 1)), 0, 0);
        assertFalse(ConfigKeys.toHf(Architecture.GEMMA4, Map.of(arr.key(), arr)).has("num_key_value_heads"), "completeHfConfig writes it");
        var llama = new dev.modelfs.format.gguf.GgufKv("llama.attention.head_count_kv", arr.type(), arr.value(), 0, 0);
        assertThrows(IllegalArgumentException.class, () -> ConfigKeys.toHf(Architecture.LLAMA, Map.of(llama.key(), llama)));
    }

    @Test
    void aPerLayerFeedForwardArrayIsLeftToGemma4AndRefusedElsewhere() {
        var ff = new dev.modelfs.format.gguf.GgufKv("gemma4.feed_forward_length", dev.modelfs.format.gguf.GgufValueType.ARRAY,
                new dev.modelfs.format.gguf.GgufArray(dev.modelfs.format.gguf.GgufValueType.INT32, List.of(128, 128, 256, 256)), 0, 0);
        ObjectNode c = ConfigKeys.toHf(Architecture.GEMMA4, Map.of(ff.key(), ff));
        assertFalse(c.has("intermediate_size"), "completeHfConfig writes it");
        var llamaFf = new dev.modelfs.format.gguf.GgufKv("llama.feed_forward_length", ff.type(), ff.value(), 0, 0);
        var e = assertThrows(IllegalArgumentException.class, () -> ConfigKeys.toHf(Architecture.LLAMA, Map.of(llamaFf.key(), llamaFf)));
        assertTrue(e.getMessage().contains("llama.feed_forward_length is an array"), e.getMessage());
    }
}
