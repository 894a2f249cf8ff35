package dev.modelfs.arch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Gemma 4's experts (26B-A4B, {@link Gemma4Experts}; docs/FORMATS.md §7.3): the names llama.cpp's converter gives the routed
 * block, the config fields rebuilt from its KVs and back, the shapes and required tensors of a model with experts and of one
 * without, and the GGUFs refused.
 */
class Gemma4ExpertsTest {
    private static final String P = "gemma4.";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Gemma4 SPEC = (Gemma4) Architecture.GEMMA4.spec();

    private static Map<String, Object> kvs() {
        Map<String, Object> kv = new HashMap<>(Map.of(P + "block_count", 2L, P + "attention.key_length", 64L,
                P + "attention.key_length_swa", 32L, P + "attention.sliding_window", 8L, P + "expert_count", 4L,
                P + "expert_used_count", 2L, P + "expert_feed_forward_length", 32L));
        kv.put(P + "attention.sliding_window_pattern", new boolean[] {true, false});
        float[] freqs = new float[32];
        Arrays.fill(freqs, 1e30f);
        Arrays.fill(freqs, 0, 8, 1f);
        kv.put("rope_freqs.weight", freqs);
        return kv;
    }

    /** Every tensor llama.cpp's converter writes in the layers of a two-layer Gemma 4 with experts. */
    private static Set<String> tensors() {
        Set<String> t = new HashSet<>();
        for (int l = 0; l < 2; l++) {
            t.add("blk." + l + ".attn_v.weight");
            for (String n : Gemma4Experts.GGUF) {
                t.add("blk." + l + "." + n);
            }
        }
        return t;
    }

    @Test
    void theRoutedBlockHasTheConvertersNames() {
        Architecture g = Architecture.GEMMA4;
        assertEquals("model.layers.1.router.proj.weight", TensorNames.toHf(g, "blk.1.ffn_gate_inp.weight").orElseThrow());
        assertEquals("model.layers.1.pre_feedforward_layernorm_2.weight", TensorNames.toHf(g, "blk.1.pre_ffw_norm_2.weight").orElseThrow());
        assertEquals("model.layers.1.post_feedforward_layernorm_1.weight", TensorNames.toHf(g, "blk.1.post_ffw_norm_1.weight").orElseThrow());
        assertEquals("blk.0.post_ffw_norm_2.weight", TensorNames.toGguf(g, "model.layers.0.post_feedforward_layernorm_2.weight").orElseThrow());
        assertEquals("blk.0.ffn_gate_inp.weight", TensorNames.toGguf(g, "model.layers.0.router.proj.weight").orElseThrow());
        // names without .weight: renamed assemblies, values as stored
        Map<String, String> renamed = Map.of("model.layers.3.router.scale", "blk.3.ffn_gate_inp.scale",
                "model.layers.3.router.per_expert_scale", "blk.3.ffn_down_exps.scale",
                "model.layers.3.experts.gate_up_proj", "blk.3.ffn_gate_up_exps.weight",
                "model.layers.3.experts.down_proj", "blk.3.ffn_down_exps.weight");
        renamed.forEach((hf, gguf) -> assertEquals(Optional.of(gguf), TensorNames.renamedToGguf(g, hf), hf));
        assertEquals(1, SPEC.assemblies().stream().filter(a -> a.hf().startsWith("experts.") || a.hf().startsWith("router."))
                .filter(a -> !a.isRename()).count(), "renames, and the gate/up halves some GGUFs hold");
        // the halves are read only: the Hugging Face → GGUF direction writes the fused tensor, as llama.cpp's converter does
        assertEquals(Optional.empty(), TensorNames.splitParts(g, "model.layers.3.experts.gate_up_proj"));
        assertFalse(SPEC.experts().isPresent(), "no per-expert HF names: transformers keeps Gemma 4's experts stacked");
        assertFalse(TensorNames.toHf(g, "blk.0.ffn_gate_exps.weight").isPresent(), "the halves are an assembly's, not renamed");
    }

    @Test
    void configFieldsComeFromTheExpertKvs() {
        GgufParams m = new MapParams(kvs(), tensors());
        SPEC.checkGguf(m, P);
        ObjectNode c = JsonNodeFactory.instance.objectNode().put("vocab_size", 560);
        SPEC.completeHfConfig(c, m, P, 64, 4, 32);
        assertTrue(c.get("enable_moe_block").asBoolean());
        assertEquals(4, c.get("num_experts").asInt());
        assertEquals(2, c.get("top_k_experts").asInt());
        assertEquals(32, c.get("moe_intermediate_size").asInt());
        Map<String, Object> dense = kvs();
        dense.keySet().removeIf(k -> k.contains("expert"));
        ObjectNode d = JsonNodeFactory.instance.objectNode().put("vocab_size", 560);
        SPEC.completeHfConfig(d, new MapParams(dense, Set.of("blk.0.attn_v.weight", "blk.1.attn_v.weight")), P, 64, 4, 32);
        assertFalse(d.get("enable_moe_block").asBoolean());
        assertFalse(d.has("num_experts") || d.has("top_k_experts") || d.has("moe_intermediate_size"));
    }

    @Test
    void expertsTheFolderCannotHoldAreRefused() {
        for (var bad : List.<Map.Entry<String, Object>>of(Map.entry(P + "expert_used_count", 5L), Map.entry(P + "expert_used_count", 0L),
                Map.entry(P + "expert_feed_forward_length", 0L))) {
            Map<String, Object> kv = kvs();
            kv.put(bad.getKey(), bad.getValue());
            assertThrows(IllegalArgumentException.class, () -> SPEC.checkGguf(new MapParams(kv, tensors()), P), bad.toString());
        }
        Set<String> partial = tensors();
        partial.remove("blk.1.ffn_down_exps.scale");
        var e = assertThrows(IllegalArgumentException.class, () -> SPEC.checkGguf(new MapParams(kvs(), partial), P));
        assertTrue(e.getMessage().contains("layers with and without ffn_down_exps.scale"), e.getMessage());
        Set<String> noDown = tensors();
        noDown.remove("blk.1.ffn_down_exps.weight");
        e = assertThrows(IllegalArgumentException.class, () -> SPEC.checkGguf(new MapParams(kvs(), noDown), P));
        assertTrue(e.getMessage().contains("layer 1 has no ffn_down_exps.weight"), e.getMessage());
        Set<String> both = tensors();
        both.addAll(Set.of("blk.0.ffn_gate_exps.weight", "blk.0.ffn_up_exps.weight"));
        e = assertThrows(IllegalArgumentException.class, () -> SPEC.checkGguf(new MapParams(kvs(), both), P));
        assertTrue(e.getMessage().contains("layer 0 has ffn_gate_up_exps.weight beside"), e.getMessage());
        Set<String> half = split(tensors(), true);
        half.remove("blk.1.ffn_up_exps.weight");
        e = assertThrows(IllegalArgumentException.class, () -> SPEC.checkGguf(new MapParams(kvs(), half), P));
        assertTrue(e.getMessage().contains("layer 1 has only one of ffn_gate_exps.weight and ffn_up_exps.weight"), e.getMessage());
        Map<String, Object> dense = kvs();
        dense.remove(P + "expert_count");
        e = assertThrows(IllegalArgumentException.class, () -> SPEC.checkGguf(new MapParams(dense, tensors()), P));
        assertTrue(e.getMessage().contains("without gemma4.expert_count"), e.getMessage());
    }

    /** {@code t} with every layer's fused gate/up experts as the separate halves, and without the per-expert scales unless {@code scaled}. */
    private static Set<String> split(Set<String> t, boolean scaled) {
        Set<String> out = new HashSet<>(t);
        for (int l = 0; l < 2; l++) {
            out.remove("blk." + l + ".ffn_gate_up_exps.weight");
            out.addAll(Set.of("blk." + l + ".ffn_gate_exps.weight", "blk." + l + ".ffn_up_exps.weight"));
            if (!scaled) {
                out.remove("blk." + l + ".ffn_down_exps.scale");
            }
        }
        return out;
    }

    /**
     * Older Ollama files (separate gate/up experts, from a moe.* checkpoint; with or without the per-expert scale, which Ollama's
     * runtime and llama.cpp take as optional) are read, as upstream llama.cpp loads them.
     */
    @Test
    void separateGateUpExpertsAndNoPerExpertScaleAreRead() {
        Set<String> fusedUnscaled = tensors();
        fusedUnscaled.removeIf(n -> n.endsWith(".ffn_down_exps.scale"));
        for (Set<String> t : List.of(split(tensors(), true), split(tensors(), false), fusedUnscaled)) {
            SPEC.checkGguf(new MapParams(kvs(), t), P);
            ObjectNode c = JsonNodeFactory.instance.objectNode().put("vocab_size", 560);
            SPEC.completeHfConfig(c, new MapParams(kvs(), t), P, 64, 4, 32);
            assertTrue(c.get("enable_moe_block").asBoolean(), t.toString());
        }
    }

    /** Without the per-expert scale the folder writes it as ones, {@code [E]}, like the layer's router scale; with it, nothing. */
    @Test
    void aMissingPerExpertScaleIsOnesInTheFolder() {
        List<HfConstant> ones = SPEC.hfConstants(new MapParams(kvs(), split(tensors(), false)), P);
        assertEquals(List.of("model.layers.0.router.per_expert_scale", "model.layers.1.router.per_expert_scale"),
                ones.stream().map(HfConstant::hf).toList());
        assertEquals("blk.1.ffn_gate_inp.scale", ones.get(1).dtypeOf());
        assertEquals(List.of(4L), Arrays.stream(ones.get(1).shape()).boxed().toList());
        assertEquals(1f, ones.get(1).value());
        assertEquals(List.of(), SPEC.hfConstants(new MapParams(kvs(), split(tensors(), true)), P));
        Map<String, Object> dense = kvs();
        dense.remove(P + "expert_count");
        assertEquals(List.of(), SPEC.hfConstants(new MapParams(dense, Set.of("blk.0.attn_v.weight")), P));
    }

    private static ObjectNode hfConfig(boolean moe) throws Exception {
        ObjectNode c = (ObjectNode) JSON.readTree("""
                {"hidden_size":64,"num_hidden_layers":2,"layer_types":["sliding_attention","full_attention"]}""");
        if (moe) {
            c.put("enable_moe_block", true).put("num_experts", 4).put("top_k_experts", 2).put("moe_intermediate_size", 32);
        }
        return c;
    }

    @Test
    void shapesKvsAndRequiredTensorsFollowTheConfig() throws Exception {
        ConfigKeys.Dims d = new ConfigKeys.Dims(64, 2, 4, 2, 16, 6, 128, 0, 0, 0);
        ObjectNode moe = hfConfig(true);
        assertEquals(List.of(4L, 64L, 64L), Arrays.stream(Gemma4Experts.layerShape("ffn_gate_up_exps", moe, d).orElseThrow()).boxed().toList());
        assertEquals(List.of(4L, 64L, 32L), Arrays.stream(Gemma4Experts.layerShape("ffn_down_exps", moe, d).orElseThrow()).boxed().toList());
        assertEquals(List.of(4L), Arrays.stream(Gemma4Experts.layerShape("ffn_down_exps.scale", moe, d).orElseThrow()).boxed().toList());
        assertEquals(List.of(64L), Arrays.stream(Gemma4Experts.layerShape("ffn_gate_inp.scale", moe, d).orElseThrow()).boxed().toList());
        assertEquals(List.of(4L, 64L), Arrays.stream(Gemma4Experts.layerShape("ffn_gate_inp", moe, d).orElseThrow()).boxed().toList());
        assertTrue(Gemma4Experts.layerShape("ffn_gate_up_exps", hfConfig(false), d).isEmpty(), "a dense model has no experts");
        List<String> kvs = new ArrayList<>(Gemma4Experts.extraKvs(moe, P).stream().map(kv -> kv.key() + "=" + kv.value()).toList());
        assertEquals(List.of("gemma4.expert_count=4", "gemma4.expert_used_count=2", "gemma4.expert_feed_forward_length=32"), kvs);
        assertEquals(List.<GgufKv>of(), Gemma4Experts.extraKvs(hfConfig(false), P));
        List<String> dense = SPEC.requiredInLayer(0, hfConfig(false));
        assertTrue(dense.contains("ffn_gate.weight") && !dense.contains("ffn_gate_inp.weight") && !dense.contains("pre_ffw_norm_2.weight"));
        assertTrue(SPEC.requiredInLayer(1, moe).containsAll(Gemma4Experts.GGUF));
        for (var bad : List.of(hfConfig(false).put("num_experts", 4), hfConfig(true).put("top_k_experts", 5),
                hfConfig(true).put("top_k_experts", 0), hfConfig(true).put("moe_intermediate_size", 0), hfConfig(true).put("num_experts", 0))) {
            assertThrows(IllegalArgumentException.class, () -> Gemma4Experts.checkHfConfig(bad), bad.toString());
        }
    }
}
