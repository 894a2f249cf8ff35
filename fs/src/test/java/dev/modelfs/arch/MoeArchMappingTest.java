package dev.modelfs.arch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * gpt-oss and DeepSeek (deepseek2) in ArchMappingTest's style: names as llama.cpp's converter and gguf-py's
 * tensor_mapping.py spell them, the assemblies of tensors the converter split or transposed
 * (docs/FORMATS.md §7.3), the config.json rebuilt from their GGUF keys (§7.4) and the refusals.
 */
class MoeArchMappingTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** GGUF metadata from a map (integers as Long, floats as Double, booleans as Boolean) and a set of tensor names. */
    static GgufParams params(Map<String, Object> kvs, Set<String> tensors) {
        return new MapParams(kvs, tensors);
    }

    @Test
    void assembliesUseTensorsNoRuleMapsAndNamesNoRuleGives() {
        for (Architecture a : Architecture.values()) {
            Set<String> ruleGguf = new HashSet<>();
            Set<String> ruleHf = new HashSet<>();
            for (LayerRule r : a.spec().layers()) {
                ruleGguf.add(r.gguf() + ".weight");
                ruleGguf.add(r.gguf() + ".bias");
                ruleHf.add(r.hf() + ".weight");
            }
            Set<String> used = new HashSet<>();
            for (Assembly as : a.spec().assemblies()) {
                for (String g : as.gguf()) {
                    boolean readOnly = a.spec().assemblies().stream().anyMatch(x -> x.isRename() && x.hf().equals(as.hf()));
                    if (as.isRowSplit() && !readOnly) {   // GraniteMoe's input_linear: each part's rule names the assembled tensor (HF -> GGUF)
                        assertEquals(as.hf(), TensorNames.rule(a, g.substring(0, g.lastIndexOf('.'))).orElseThrow().hf() + ".weight", a + " " + g);
                    } else {
                        assertFalse(ruleGguf.contains(g), a + ": " + g + " is both a rule's and an assembly's");
                    }
                    assertTrue(used.add(g), a + ": " + g + " in two assemblies");
                    // .scale: Gemma 4's router; a suffix-less GGUF name only for a rename of a suffix-less checkpoint name
                    // (mllama's gates, kept by Ollama)
                    assertTrue(g.endsWith(".weight") || g.endsWith(".bias") || g.endsWith(".scale") || (as.isRename() && g.equals(as.hf())), g);
                }
            }
        }
        // DeepSeek's kv_b_proj: either assembled from attn_k_b/attn_v_b or, in older GGUFs, the rule's attn_kv_b
        assertEquals(Optional.of("model.layers.2.self_attn.kv_b_proj.weight"), TensorNames.toHf(Architecture.DEEPSEEK2, "blk.2.attn_kv_b.weight"));
        assertEquals("self_attn.kv_b_proj.weight", Architecture.DEEPSEEK2.spec().assemblies().getFirst().hf());
        // Gemma 4's experts.gate_up_proj: a rename of the fused tensor and a read-only row split of its halves, no rule
        assertEquals(2, Architecture.GEMMA4.spec().assemblies().stream().filter(x -> x.hf().equals("experts.gate_up_proj")).count());
        assertFalse(TensorNames.rule(Architecture.GEMMA4, "ffn_gate_exps").isPresent());
    }

    @Test
    void gptOssNamesAsLlamaCppWritesThem() {
        Architecture g = Architecture.GPT_OSS;
        assertEquals("gpt-oss", g.ggufName());
        assertEquals(new Architecture.Resolution.Supported(g), Architecture.fromHf("GptOssForCausalLM", "gpt_oss"));
        assertEquals(Optional.of(g), Architecture.fromGguf("gpt-oss", params(Map.of(), Set.of())));
        assertEquals("blk.3.post_attention_norm.weight", TensorNames.toGguf(g, "model.layers.3.post_attention_layernorm.weight").orElseThrow());
        assertEquals("blk.3.ffn_gate_inp.bias", TensorNames.toGguf(g, "model.layers.3.mlp.router.bias").orElseThrow());
        assertEquals("model.layers.3.self_attn.o_proj.bias", TensorNames.toHf(g, "blk.3.attn_output.bias").orElseThrow());
        assertFalse(TensorNames.toHf(g, "blk.3.ffn_norm.weight").isPresent());
        assertFalse(TensorNames.permutation(g, "blk.3.attn_q.weight").isPresent());
        // experts are assembled (fused and transposed in HF), never sliced per expert
        assertFalse(TensorNames.expertSlice(g, "blk.3.ffn_up_exps.weight", 0).isPresent());
        Map<String, Assembly> byHf = new HashMap<>();
        g.spec().assemblies().forEach(a -> byHf.put(a.hf(), a));
        assertEquals(Set.of("self_attn.sinks", "mlp.experts.gate_up_proj", "mlp.experts.gate_up_proj_bias", "mlp.experts.down_proj",
                "mlp.experts.down_proj_bias"), byHf.keySet());
        assertEquals(List.of(new Assembly.Part(List.of("ffn_gate_exps.weight", "ffn_up_exps.weight"), true)),
                byHf.get("mlp.experts.gate_up_proj").parts());
        assertTrue(byHf.get("self_attn.sinks").isRename());
        assertTrue(byHf.get("mlp.experts.down_proj_bias").isRename());
        assertFalse(byHf.get("mlp.experts.down_proj").isRename());
    }

    @Test
    void gptOssConfigHasAlternatingWindowsAndGptOssYarn() {
        String p = "gpt-oss.";
        GgufParams m = params(Map.of(p + "block_count", 4L, p + "attention.sliding_window", 8L, p + "feed_forward_length", 64L,
                p + "expert_feed_forward_length", 64L, p + "rope.scaling.yarn_beta_fast", 32.0, p + "rope.scaling.yarn_beta_slow", 1.0), Set.of());
        GptOss spec = (GptOss) Architecture.GPT_OSS.spec();
        spec.checkGguf(m, p);
        ObjectNode c = JsonNodeFactory.instance.objectNode();
        c.putObject("rope_scaling").put("rope_type", "yarn").put("factor", 32.0);
        spec.completeHfConfig(c, m, p, 64, 4, 16);
        assertEquals(List.of("sliding_attention", "full_attention", "sliding_attention", "full_attention"),
                JSON.convertValue(c.get("layer_types"), List.class));
        assertFalse(c.get("rope_scaling").get("truncate").asBoolean());
        assertEquals(32.0, c.get("rope_scaling").get("beta_fast").asDouble());
        assertEquals(1.0, c.get("rope_scaling").get("beta_slow").asDouble());
        // refusals: a rope base of its own for the window, experts of another size, another rope scaling, the other direction
        assertThrows(IllegalArgumentException.class, () -> spec.checkGguf(params(Map.of(p + "feed_forward_length", 64L,
                p + "rope.freq_base", 150000.0, p + "rope.freq_base_swa", 10000.0), Set.of()), p));
        assertThrows(IllegalArgumentException.class, () -> spec.checkGguf(params(Map.of(p + "feed_forward_length", 64L,
                p + "expert_feed_forward_length", 32L), Set.of()), p));
        ObjectNode linear = JsonNodeFactory.instance.objectNode();
        linear.putObject("rope_scaling").put("rope_type", "linear");
        assertThrows(IllegalArgumentException.class, () -> spec.completeHfConfig(linear, m, p, 64, 4, 16));
        var synth = assertThrows(IllegalArgumentException.class, () -> ConfigKeys.toGguf(Architecture.GPT_OSS, JSON.readTree("""
                {"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":64,"rms_norm_eps":1e-5,
                 "max_position_embeddings":512,"vocab_size":400,"num_local_experts":4,"num_experts_per_tok":2}""")));
        assertTrue(synth.getMessage().contains("Hugging Face folders only"), synth.getMessage());
    }

    @Test
    void deepseekNamesAsLlamaCppWritesThem() {
        Architecture d = Architecture.DEEPSEEK2;
        assertEquals(new Architecture.Resolution.Supported(d), Architecture.fromHf("DeepseekV3ForCausalLM", null));
        assertEquals(new Architecture.Resolution.Supported(d), Architecture.fromHf(null, "deepseek_v3"));
        assertInstanceOf(Architecture.Resolution.Unsupported.class, Architecture.fromHf("DeepseekV2ForCausalLM", "deepseek_v2"));
        assertEquals("blk.1.attn_kv_a_mqa.weight", TensorNames.toGguf(d, "model.layers.1.self_attn.kv_a_proj_with_mqa.weight").orElseThrow());
        assertEquals("blk.1.attn_q_a_norm.weight", TensorNames.toGguf(d, "model.layers.1.self_attn.q_a_layernorm.weight").orElseThrow());
        assertEquals("blk.1.ffn_down_shexp.weight", TensorNames.toGguf(d, "model.layers.1.mlp.shared_experts.down_proj.weight").orElseThrow());
        assertEquals("blk.0.ffn_gate.weight", TensorNames.toGguf(d, "model.layers.0.mlp.gate_proj.weight").orElseThrow());
        assertEquals("blk.1.ffn_gate_inp.weight", TensorNames.toGguf(d, "model.layers.1.mlp.gate.weight").orElseThrow());
        assertEquals("blk.1.ffn_norm.weight", TensorNames.toGguf(d, "model.layers.1.post_attention_layernorm.weight").orElseThrow());
        assertEquals("model.layers.1.mlp.experts.5.up_proj.weight",
                TensorNames.expertSlice(d, "blk.1.ffn_up_exps.weight", 5).orElseThrow().hfName());
        assertFalse(TensorNames.toHf(d, "blk.1.attn_k_b.weight").isPresent());   // assembled into kv_b_proj
        assertFalse(TensorNames.permutation(d, "blk.1.attn_q_b.weight").isPresent());
        Assembly kvB = d.spec().assemblies().getFirst();
        assertEquals(List.of(new Assembly.Part(List.of("attn_k_b.weight"), true), new Assembly.Part(List.of("attn_v_b.weight"), false)),
                kvB.parts());
        assertEquals(Assembly.Layout.ROWS, kvB.layout());
    }

    static Map<String, Object> deepseekKvs() {
        String p = "deepseek2.";
        Map<String, Object> kvs = new HashMap<>(Map.of(p + "expert_gating_func", 2L, p + "attention.q_lora_rank", 64L,
                p + "attention.key_length_mla", 48L, p + "attention.value_length_mla", 32L, p + "attention.key_length", 80L,
                p + "attention.value_length", 64L, p + "rope.dimension_count", 16L, p + "rope.scaling.yarn_log_multiplier",
                (double) 0.1f, p + "expert_weights_norm", true));
        return kvs;
    }

    @Test
    void deepseekConfigHasMlaSizesRoutingAndYarnMscale() {
        String p = "deepseek2.";
        Set<String> split = Set.of("blk.0.attn_k_b.weight", "blk.0.attn_v_b.weight");
        Deepseek2 spec = (Deepseek2) Architecture.DEEPSEEK2.spec();
        GgufParams m = params(deepseekKvs(), split);
        spec.checkGguf(m, p);
        assertEquals(16, spec.headDim(m, p, 64, 4));
        ObjectNode c = JsonNodeFactory.instance.objectNode();
        c.put("num_key_value_heads", 1).put("n_routed_experts", 8);
        c.putObject("rope_scaling").put("rope_type", "yarn").put("factor", 4.0);
        spec.completeHfConfig(c, m, p, 64, 4, 16);
        assertEquals(32, c.get("qk_nope_head_dim").asInt());    // key_length_mla - rope, not key_length (kv_lora + rope)
        assertEquals(16, c.get("qk_rope_head_dim").asInt());
        assertEquals(32, c.get("v_head_dim").asInt());
        assertEquals(4, c.get("num_key_value_heads").asInt());
        assertTrue(c.get("norm_topk_prob").asBoolean());
        assertEquals(1, c.get("n_group").asInt());
        assertEquals(1.0, c.get("routed_scaling_factor").asDouble());
        assertEquals(1.0, c.get("rope_scaling").get("mscale_all_dim").asDouble());
        assertEquals(1.0, c.get("rope_scaling").get("mscale").asDouble());
        assertTrue(c.get("rope_interleave").asBoolean());
        // a GGUF older than the _mla keys: key_length / value_length are the per-head sizes
        Map<String, Object> old = deepseekKvs();
        old.remove(p + "attention.key_length_mla");
        old.remove(p + "attention.value_length_mla");
        old.put(p + "attention.key_length", 48L);
        old.put(p + "attention.value_length", 32L);
        ObjectNode c2 = JsonNodeFactory.instance.objectNode().put("n_routed_experts", 8);
        spec.completeHfConfig(c2, params(old, Set.of("blk.0.attn_kv_b.weight")), p, 64, 4, 16);
        assertEquals(32, c2.get("qk_nope_head_dim").asInt());
    }

    @Test
    void deepseekRefusesWhatDeepseekV3WouldRunDifferently() {
        String p = "deepseek2.";
        Set<String> split = Set.of("blk.0.attn_k_b.weight", "blk.0.attn_v_b.weight");
        Deepseek2 spec = (Deepseek2) Architecture.DEEPSEEK2.spec();
        Map<String, Object> softmax = deepseekKvs();
        softmax.remove(p + "expert_gating_func");          // llama.cpp then routes by softmax (DeepSeek-V2)
        var e = assertThrows(IllegalArgumentException.class, () -> spec.checkGguf(params(softmax, split), p));
        assertTrue(e.getMessage().contains("sigmoid"), e.getMessage());
        softmax.put(p + "expert_gating_func", 1L);
        assertThrows(IllegalArgumentException.class, () -> spec.checkGguf(params(softmax, split), p));
        Map<String, Object> lite = deepseekKvs();
        lite.remove(p + "attention.q_lora_rank");
        assertThrows(IllegalArgumentException.class, () -> spec.checkGguf(params(lite, split), p));
        assertThrows(IllegalArgumentException.class, () -> spec.checkGguf(params(deepseekKvs(), Set.of("blk.0.attn_k_b.weight")), p));
        ObjectNode dense = JsonNodeFactory.instance.objectNode();
        assertThrows(IllegalArgumentException.class, () -> spec.completeHfConfig(dense, params(deepseekKvs(), split), p, 64, 4, 16));
        ObjectNode linear = JsonNodeFactory.instance.objectNode().put("n_routed_experts", 8);
        linear.putObject("rope_scaling").put("rope_type", "linear");
        assertThrows(IllegalArgumentException.class, () -> spec.completeHfConfig(linear, params(deepseekKvs(), split), p, 64, 4, 16));
        var synth = assertThrows(IllegalArgumentException.class, () -> ConfigKeys.dims(Architecture.DEEPSEEK2, JSON.readTree("""
                {"architectures":["DeepseekV3ForCausalLM"],"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
                 "intermediate_size":64,"vocab_size":400,"n_routed_experts":8}""")));
        assertTrue(synth.getMessage().contains("Hugging Face folders only"), synth.getMessage());
    }
}
