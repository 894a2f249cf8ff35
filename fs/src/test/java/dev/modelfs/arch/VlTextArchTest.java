package dev.modelfs.arch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The text models of vision-language GGUFs, GGUF → Hugging Face (docs/FORMATS.md §7.3, §7.4): {@code qwen2vl} and
 * {@code qwen3vl} as Qwen2 / Qwen3 causal LMs (M-RoPE is plain rope on text), {@code mistral3} as Mistral or, with yarn,
 * Ministral 3 with its rope parameters read back; the names are llama.cpp's converter's, and what the folder would run
 * differently is refused.
 */
class VlTextArchTest {

    private static ObjectNode complete(Architecture a, Map<String, Object> kv) {
        ObjectNode c = JsonNodeFactory.instance.objectNode().put("rope_theta", 1e6);
        c.putArray("architectures").add(a.hfArchitecture());
        c.put("model_type", a.hfModelType());
        a.spec().completeHfConfig(c, new MapParams(kv), a.ggufName() + ".", 64, 4, 16);
        return c;
    }

    @Test
    void qwenVlTextModelsAreQwenCausalLms() {
        Map<String, Object> kv = new HashMap<>(Map.of("qwen2vl.rope.dimension_sections", new int[] {2, 3, 3, 0},
                "qwen2vl.embedding_length", 64L, "qwen2vl.attention.head_count", 4L));
        Architecture q2 = Architecture.fromGguf("qwen2vl", new MapParams(kv)).orElseThrow();
        assertEquals(Architecture.QWEN2VL, q2);
        q2.spec().checkGguf(new MapParams(kv), "qwen2vl.");
        assertEquals(List.of("attn_q", "attn_k", "attn_v"), q2.spec().requiredBiases());
        assertFalse(q2.permutesQk());
        assertEquals("model.layers.1.self_attn.q_proj.weight", TensorNames.toHf(q2, "blk.1.attn_q.weight").orElseThrow());
        ObjectNode c = complete(q2, kv);
        assertEquals("Qwen2ForCausalLM", c.path("architectures").path(0).asText());
        assertEquals("qwen2", c.path("model_type").asText());

        Map<String, Object> kv3 = Map.of("qwen3vl.rope.dimension_sections", new int[] {24, 20, 20, 0}, "qwen3vl.attention.key_length", 128L,
                "qwen3vl.n_deepstack_layers", 1L);
        Architecture q3 = Architecture.fromGguf("qwen3vl", new MapParams(kv3)).orElseThrow();
        assertEquals(Architecture.QWEN3VL, q3);
        q3.spec().checkGguf(new MapParams(kv3), "qwen3vl.");
        assertEquals("model.layers.0.self_attn.k_norm.weight", TensorNames.toHf(q3, "blk.0.attn_k_norm.weight").orElseThrow());
        assertEquals("Qwen3ForCausalLM", complete(q3, kv3).path("architectures").path(0).asText());
        assertEquals("qwen3", complete(q3, kv3).path("model_type").asText());
    }

    @Test
    void qwen3VlMoeTextIsQwen3MoeWithLlamaCppsExpertWidthFallback() {
        Map<String, Object> kv = Map.of("qwen3vlmoe.rope.dimension_sections", new int[] {24, 20, 20, 0}, "qwen3vlmoe.attention.key_length", 128L,
                "qwen3vlmoe.expert_used_count", 2L, "qwen3vlmoe.expert_count", 4L, "qwen3vlmoe.feed_forward_length", 32L);
        Architecture a = Architecture.fromGguf("qwen3vlmoe", new MapParams(kv)).orElseThrow();
        assertEquals(Architecture.QWEN3VLMOE, a);
        a.spec().checkGguf(new MapParams(kv), "qwen3vlmoe.");
        assertFalse(a.permutesQk());
        assertEquals("model.layers.1.mlp.gate.weight", TensorNames.toHf(a, "blk.1.ffn_gate_inp.weight").orElseThrow());
        assertEquals("model.layers.1.mlp.experts.3.up_proj.weight",
                TensorNames.expertSlice(a, "blk.1.ffn_up_exps.weight", 3).orElseThrow().hfName());
        ObjectNode c = complete(a, kv);
        assertEquals("Qwen3MoeForCausalLM", c.path("architectures").path(0).asText());
        assertEquals("qwen3_moe", c.path("model_type").asText());
        assertTrue(c.path("norm_topk_prob").asBoolean(), "Qwen3-VL-MoE's router always normalizes the top-k weights");
        assertEquals(16, c.path("moe_intermediate_size").asInt(), "Ollama's files have no expert width: feed_forward_length / experts used");
        ObjectNode given = JsonNodeFactory.instance.objectNode().put("moe_intermediate_size", 8);
        a.spec().completeHfConfig(given, new MapParams(kv), "qwen3vlmoe.", 64, 2, 128);
        assertEquals(8, given.path("moe_intermediate_size").asInt(), "expert_feed_forward_length, when the GGUF has it");
        var odd = assertThrows(IllegalArgumentException.class, () -> a.spec().checkGguf(new MapParams(Map.of("qwen3vlmoe.attention.key_length", 128L,
                "qwen3vlmoe.expert_used_count", 3L, "qwen3vlmoe.feed_forward_length", 32L)), "qwen3vlmoe."));
        assertTrue(odd.getMessage().contains("no multiple"), odd.getMessage());
    }

    @Test
    void glmOcrTextIsGlm4WithTheNeoxRowsPutBack() {
        // llama.cpp's conversion of the published checkpoint: 2 text blocks and the MTP block after them
        Map<String, Object> kv = Map.of("glm4.rope.dimension_sections", new int[] {2, 3, 3, 0}, "glm4.embedding_length", 64L,
                "glm4.attention.head_count", 4L, "glm4.rope.dimension_count", 16L, "glm4.block_count", 3L, "glm4.nextn_predict_layers", 1L);
        Architecture a = Architecture.fromGguf("glm4", new MapParams(kv)).orElseThrow();
        assertEquals(Architecture.GLMOCR, a);
        assertTrue(Architecture.fromGguf("glm4", new MapParams(Map.of())).isEmpty(), "GLM-4-0414 (no M-RoPE) is not mapped");
        a.spec().checkGguf(new MapParams(kv), "glm4.");
        assertTrue(a.permutesQk() && a.spec().permutationReversed());
        assertEquals("model.layers.0.post_self_attn_layernorm.weight", TensorNames.toHf(a, "blk.0.post_attention_norm.weight").orElseThrow());
        assertEquals("model.layers.0.post_attention_layernorm.weight", TensorNames.toHf(a, "blk.0.ffn_norm.weight").orElseThrow());
        assertEquals("model.layers.0.mlp.gate_up_proj.weight", TensorNames.toHf(a, "blk.0.ffn_up.weight").orElseThrow());
        assertEquals("model.layers.0.post_mlp_layernorm.weight", TensorNames.toHf(a, "blk.0.post_ffw_norm.weight").orElseThrow());
        assertEquals("model.layers.0.self_attn.q_proj.bias", TensorNames.toHf(a, "blk.0.attn_q.bias").orElseThrow());
        ObjectNode c = complete(a, kv);
        assertEquals("Glm4ForCausalLM", c.path("architectures").path(0).asText());
        assertEquals("glm4", c.path("model_type").asText());
        assertEquals(1.0, c.path("partial_rotary_factor").asDouble());
        // normal_to_neox put head row 2t + half at half * D/2 + t: the HF row 2t + half is read from there
        QkPermutation.Order o = QkPermutation.of(QkPermutation.Which.K, 4, 2, 32).ggufOrder();
        assertEquals(List.of(0L, 8L, 1L, 9L, 2L), java.util.stream.LongStream.range(0, 5).map(o).boxed().toList());
        assertEquals(2, c.path("num_hidden_layers").asInt(), "the MTP block is no layer of the folder");
        MapParams p = new MapParams(kv);
        for (String t : List.of("blk.2.nextn.eh_proj.weight", "blk.2.nextn.enorm.weight", "blk.2.nextn.shared_head_head.weight",
                "blk.2.attn_q.weight", "blk.2.ffn_up.weight")) {
            assertTrue(a.spec().hfLeavesOut(t, p, "glm4."), t);
        }
        for (String t : List.of("blk.1.attn_q.weight", "blk.0.ffn_up.weight", "output.weight", "token_embd.weight")) {
            assertFalse(a.spec().hfLeavesOut(t, p, "glm4."), t);
        }
        var mtp = assertThrows(IllegalArgumentException.class, () -> a.spec().checkGguf(new MapParams(Map.of("glm4.embedding_length", 64L,
                "glm4.attention.head_count", 4L, "glm4.block_count", 1L, "glm4.nextn_predict_layers", 1L)), "glm4."));
        assertTrue(mtp.getMessage().contains("MTP"), mtp.getMessage());
        var half = assertThrows(IllegalArgumentException.class, () -> a.spec().checkGguf(new MapParams(Map.of("glm4.embedding_length", 64L,
                "glm4.attention.head_count", 4L, "glm4.rope.dimension_count", 8L)), "glm4."), "head dimension 64 / 4, not the rope width");
        assertTrue(half.getMessage().contains("partial rotation"), half.getMessage());
    }

    @Test
    void mropeThatIsNotPlainRopeOnTextIsRefused() {
        var extra = assertThrows(IllegalArgumentException.class, () -> Architecture.QWEN2VL.spec().checkGguf(new MapParams(Map.of(
                "qwen2vl.rope.dimension_sections", new int[] {2, 3, 2, 1}, "qwen2vl.embedding_length", 64L,
                "qwen2vl.attention.head_count", 4L)), "qwen2vl."));
        assertTrue(extra.getMessage().contains("dimension_sections[3]"), extra.getMessage());
        var partial = assertThrows(IllegalArgumentException.class, () -> Architecture.QWEN3VL.spec().checkGguf(new MapParams(Map.of(
                "qwen3vl.attention.key_length", 128L, "qwen3vl.rope.dimension_count", 64L)), "qwen3vl."));
        assertTrue(partial.getMessage().contains("partial rotation"), partial.getMessage());
        for (Architecture a : List.of(Architecture.QWEN2VL, Architecture.QWEN3VL, Architecture.MISTRAL3, Architecture.QWEN3VLMOE, Architecture.GLMOCR)) {
            assertThrows(IllegalArgumentException.class, () -> a.spec().checkHfConfig(JsonNodeFactory.instance.objectNode()),
                    a + " synthesizes no GGUF");
        }
    }

    @Test
    void mistral3WithoutScalingIsMistralAndWithYarnMinistral3() {
        Architecture m = Architecture.fromGguf("mistral3", new MapParams(Map.of())).orElseThrow();
        assertEquals(Architecture.MISTRAL3, m);
        assertTrue(m.permutesQk(), "llama.cpp's converter permutes mistral3's q/k rows (LlamaModel)");
        assertEquals("model.layers.0.mlp.down_proj.weight", TensorNames.toHf(m, "blk.0.ffn_down.weight").orElseThrow());
        ObjectNode plain = complete(m, Map.of());
        assertEquals("MistralForCausalLM", plain.path("architectures").path(0).asText());
        assertEquals("mistral", plain.path("model_type").asText());
        assertTrue(plain.path("sliding_window").isNull());
        assertEquals(1e6, plain.path("rope_theta").asDouble());

        Map<String, Object> kv = Map.of("mistral3.rope.freq_base", 1e6, "mistral3.rope.scaling.yarn_log_multiplier", 1.0,
                "mistral3.attention.temperature_scale", 0.1, "mistral3.rope.scaling.yarn_beta_fast", 16.0);
        ObjectNode c = JsonNodeFactory.instance.objectNode().put("rope_theta", 1e6);
        c.putObject("rope_scaling").put("rope_type", "yarn").put("factor", 4.0).put("original_max_position_embeddings", 512);
        m.spec().checkGguf(new MapParams(Map.of("mistral3.rope.scaling.type", "yarn")), "mistral3.");
        m.spec().completeHfConfig(c, new MapParams(kv), "mistral3.", 64, 4, 16);
        assertEquals("Ministral3ForCausalLM", c.path("architectures").path(0).asText());
        assertEquals("ministral3", c.path("model_type").asText());
        assertFalse(c.has("rope_scaling") || c.has("rope_theta"), "transformers 5's rope_parameters only");
        ObjectNode r = (ObjectNode) c.get("rope_parameters");
        assertEquals("yarn", r.path("rope_type").asText());
        assertEquals(1e6, r.path("rope_theta").asDouble());
        assertEquals(4.0, r.path("factor").asDouble());
        assertEquals(512, r.path("original_max_position_embeddings").asInt());
        assertEquals(16.0, r.path("beta_fast").asDouble());
        assertEquals(1.0, r.path("beta_slow").asDouble());
        assertEquals(1.0, r.path("mscale").asDouble());
        assertEquals(1.0, r.path("mscale_all_dim").asDouble());
        assertEquals(0.1, r.path("llama_4_scaling_beta").asDouble());

        var linear = assertThrows(IllegalArgumentException.class, () -> m.spec().checkGguf(
                new MapParams(Map.of("mistral3.rope.scaling.type", "linear")), "mistral3."));
        assertTrue(linear.getMessage().contains("only yarn"), linear.getMessage());
        assertThrows(IllegalArgumentException.class, () -> m.spec().checkGguf(
                new MapParams(Map.of("mistral3.attention.temperature_scale", 0.1)), "mistral3."));
    }

    @Test
    void tekkenIsMistralsTokenizerJsonRegex() {
        // the Split of Mistral's tokenizer.json files (as llama.cpp's llama-vocab.cpp quotes it), written by hand here
        String regex = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
                + "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
                + "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
        var tekken = TokenizerTables.PreTokenizer.fromGguf("tekken").orElseThrow();
        assertEquals(regex, tekken.hfRegex());
        assertEquals(tekken, TokenizerTables.PreTokenizer.fromHf(tekken.toHf()).orElseThrow());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(regex).matcher("HelloWorld 42 a/b\n");
        List<String> parts = new java.util.ArrayList<>();
        while (m.find()) {
            parts.add(m.group());
        }
        assertEquals(List.of("Hello", "World", " ", "4", "2", " a", "/b", "\n"), parts, "case splits, single digits (as the tokenizers library splits it)");
    }

    @Test
    void theVisionLanguageNamesResolveButSynthesizeNothing() {
        for (String hf : List.of("Qwen2_5_VLForConditionalGeneration", "Qwen3VLForConditionalGeneration", "Mistral3ForConditionalGeneration",
                "Qwen3VLMoeForConditionalGeneration", "GlmOcrForConditionalGeneration")) {
            var r = Architecture.fromHf(hf, null);
            assertTrue(r instanceof Architecture.Resolution.Supported, hf);
            Architecture a = ((Architecture.Resolution.Supported) r).architecture();
            assertThrows(IllegalArgumentException.class, () -> ConfigKeys.dims(a, JsonNodeFactory.instance.objectNode()), hf);
        }
        assertEquals(Set.of(), Set.copyOf(Architecture.QWEN3VL.spec().requiredBiases()));
    }
}
