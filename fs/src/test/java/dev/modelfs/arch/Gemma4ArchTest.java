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
        var kEqV = assertThrows(IllegalArgumentException.class, () -> SPEC.checkGguf(params(kvs(), Set.of("blk.0.attn_v.weight")), P));
        assertTrue(kEqV.getMessage().contains("layer 1 has no attn_v"), kEqV.getMessage());
        for (float[] freqs : new float[][] {null, new float[16], {1f, 2f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f,
            1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f,
            1e30f, 1e30f, 1e30f, 1e30f}}) {
            Map<String, Object> kv = kvs();
            kv.put("rope_freqs.weight", freqs);
            ObjectNode c = JsonNodeFactory.instance.objectNode();
            assertThrows(IllegalArgumentException.class, () -> SPEC.completeHfConfig(c, params(kv, V), P, 64, 4, 32));
        }
    }
}
