package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.Vectors;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ArchMappingTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static List<String> hfNames(Architecture a) {
        if (a.spec().encoder()) {
            return encoderNames(a);
        }
        List<String> out = new java.util.ArrayList<>(List.of("model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"));
        List<String> layer = new java.util.ArrayList<>(switch (a) {
            case PHI3 -> List.of("input_layernorm", "self_attn.qkv_proj", "self_attn.o_proj", "post_attention_layernorm",
                    "mlp.gate_up_proj", "mlp.down_proj");
            case DEEPSEEK2 -> List.of("input_layernorm", "self_attn.q_a_proj", "self_attn.q_a_layernorm", "self_attn.q_b_proj",
                    "self_attn.kv_a_proj_with_mqa", "self_attn.kv_a_layernorm", "self_attn.kv_b_proj", "self_attn.o_proj",
                    "post_attention_layernorm");
            default -> List.of("input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                    "self_attn.o_proj", "post_attention_layernorm");
        });
        if (a == Architecture.OLMO2) {   // post-norms only
            layer.set(0, "post_feedforward_layernorm");
        }
        switch (a) {
            case QWEN3MOE, QWEN3VLMOE -> layer.addAll(List.of("mlp.gate", "mlp.experts.gate_proj", "mlp.experts.up_proj", "mlp.experts.down_proj"));
            case QWEN2MOE -> layer.addAll(List.of("mlp.gate", "mlp.experts.gate_proj", "mlp.experts.up_proj", "mlp.experts.down_proj",
                    "mlp.shared_expert_gate", "mlp.shared_expert.gate_proj", "mlp.shared_expert.up_proj", "mlp.shared_expert.down_proj"));
            case MIXTRAL -> layer.addAll(List.of("block_sparse_moe.gate", "block_sparse_moe.experts.w1", "block_sparse_moe.experts.w2",
                    "block_sparse_moe.experts.w3"));
            case GRANITEMOE -> layer.addAll(List.of("block_sparse_moe.router.layer", "block_sparse_moe.output_linear"));   // input_linear is assembled
            case GPT_OSS -> layer.add("mlp.router");
            case DEEPSEEK2 -> layer.addAll(List.of("mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", "mlp.gate", "mlp.experts.gate_proj",
                    "mlp.experts.up_proj", "mlp.experts.down_proj", "mlp.shared_experts.gate_proj", "mlp.shared_experts.up_proj",
                    "mlp.shared_experts.down_proj"));
            case PHI3 -> { }
            case QWEN35MOE -> layer.addAll(List.of("mlp.gate", "mlp.experts.gate_proj", "mlp.experts.up_proj", "mlp.experts.down_proj",
                    "mlp.shared_expert_gate", "mlp.shared_expert.gate_proj", "mlp.shared_expert.up_proj", "mlp.shared_expert.down_proj"));
            case GLMOCR -> layer.addAll(List.of("post_self_attn_layernorm", "mlp.gate_up_proj", "mlp.down_proj", "post_mlp_layernorm"));
            default -> layer.addAll(List.of("mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"));
        }
        for (String p : layer) {
            out.add("model.layers.7." + p + ".weight");
        }
        if (a != Architecture.DEEPSEEK2) {
            out.add("model.layers.0.self_attn." + (a == Architecture.PHI3 ? "qkv_proj" : "q_proj") + ".bias");
        }
        if (a == Architecture.GEMMA3 || a == Architecture.GEMMA2 || a == Architecture.GEMMA4) {
            out.add("model.layers.7.pre_feedforward_layernorm.weight");
            out.add("model.layers.7.post_feedforward_layernorm.weight");
        }
        if (a == Architecture.QWEN35 || a == Architecture.QWEN35MOE) {   // the gated delta-net's tensors with a .weight
            for (String p : List.of("in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "conv1d", "norm", "out_proj")) {
                out.add("model.layers.2.linear_attn." + p + ".weight");
            }
        }
        if (a == Architecture.QWEN3 || a == Architecture.QWEN3MOE || a == Architecture.QWEN3VLMOE || a == Architecture.GEMMA3 || a == Architecture.OLMO2
                || a == Architecture.GEMMA4 || a == Architecture.QWEN35 || a == Architecture.QWEN35MOE) {
            out.add("model.layers.3.self_attn.q_norm.weight");
            out.add("model.layers.3.self_attn.k_norm.weight");
        }
        return out;
    }

    /** Every HF tensor name of an encoder (layer 7, and biases where the architecture has them). */
    private static List<String> encoderNames(Architecture a) {
        List<String> out = new java.util.ArrayList<>();
        for (String[] g : a.spec().globals()) {
            out.add(g[0] + ".weight");
        }
        boolean bert = a != Architecture.NOMIC_BERT;
        for (LayerRule r : a.spec().layers()) {
            out.add(a.spec().hfLayerPrefix() + "7." + r.hf() + ".weight");
            if (bert || r.gguf().endsWith("norm")) {
                out.add(a.spec().hfLayerPrefix() + "7." + r.hf() + ".bias");
            }
        }
        return out;
    }

    /** GGUF metadata with {@code llama.expert_count} = {@code experts} (absent when null), no tensors. */
    private static GgufParams params(Long experts) {
        return params(experts, null);
    }

    /** The same with {@code tokenizer.ggml.model} = {@code tokenizer} (absent when null). */
    private static GgufParams params(Long experts, String tokenizer) {
        return paramsOf(experts == null ? Map.of() : Map.of("llama.expert_count", experts), tokenizer);
    }

    /** GGUF metadata with these integer KVs, no tensors. */
    private static GgufParams params(Map<String, Long> ints) {
        return paramsOf(ints, null);
    }

    /** GGUF metadata with these integer KVs and {@code tokenizer.ggml.model} = {@code tokenizer} (absent when null), no tensors. */
    private static GgufParams paramsOf(Map<String, Long> ints, String tokenizer) {
        Map<String, Object> kvs = new HashMap<>(ints);
        if (tokenizer != null) {
            kvs.put("tokenizer.ggml.model", tokenizer);
        }
        return new MapParams(kvs);
    }

    /** ArchSpec's invariants, for every architecture: unique layer names both ways, disjoint HF names, experts iff stacked rules. */
    @Test
    void everyArchitectureKeepsTheSpecInvariants() {
        Set<String> hfNames = new HashSet<>();
        for (Architecture a : Architecture.values()) {
            ArchSpec s = a.spec();
            assertEquals(s.layers().size(), s.layers().stream().map(LayerRule::gguf).distinct().count(), a + " GGUF names");
            // a row split's parts' rules share its HF name (MoeArchMappingTest checks which)
            long splitParts = s.assemblies().stream().filter(Assembly::isRowSplit)   // not a read-only one (a rename gives its HF name)
                    .filter(x -> s.assemblies().stream().noneMatch(y -> y.isRename() && y.hf().equals(x.hf())))
                    .mapToLong(x -> x.parts().size() - 1).sum();
            assertEquals(s.layers().size() - splitParts, s.layers().stream().map(LayerRule::hf).distinct().count(), a + " HF names");
            for (String n : s.tables().hfArchitectures()) {
                assertTrue(hfNames.add(n), n + " claimed twice");
            }
            for (String n : s.tables().hfModelTypes()) {
                assertTrue(hfNames.add("model_type " + n), n + " claimed twice");
            }
            boolean stacked = s.layers().stream().anyMatch(r -> r.gguf().endsWith("_exps"));
            assertEquals(stacked, s.experts().isPresent(), a + " experts");
            for (String b : s.requiredBiases()) {
                assertTrue(s.layers().stream().anyMatch(r -> r.gguf().equals(b)), a + " bias of " + b);
            }
        }
    }

    @Test
    void namesRoundTripBothWaysForEveryArchitecture() {
        for (Architecture a : Architecture.values()) {
            Set<String> ggufs = new HashSet<>();
            for (String hf : hfNames(a)) {
                String g = TensorNames.toGguf(a, hf).orElseThrow(() -> new AssertionError(a + " " + hf));
                assertTrue(g.getBytes().length < 64, g);
                assertTrue(ggufs.add(g), "two HF names map to " + g);
                assertEquals(Optional.of(hf), TensorNames.toHf(a, g), a + " " + g);
            }
        }
    }

    @Test
    void encoderNamesMatchFormatsTable() {
        Architecture b = Architecture.BERT;
        assertEquals("blk.2.attn_q.weight", TensorNames.toGguf(b, "encoder.layer.2.attention.self.query.weight").orElseThrow());
        assertEquals("encoder.layer.2.output.LayerNorm.bias", TensorNames.toHf(b, "blk.2.layer_output_norm.bias").orElseThrow());
        assertEquals("encoder.layer.2.attention.output.LayerNorm.weight", TensorNames.toHf(b, "blk.2.attn_output_norm.weight").orElseThrow());
        assertEquals("encoder.layer.2.intermediate.dense.weight", TensorNames.toHf(b, "blk.2.ffn_up.weight").orElseThrow());
        assertEquals("embeddings.position_embeddings.weight", TensorNames.toHf(b, "position_embd.weight").orElseThrow());
        assertEquals("embeddings.LayerNorm.bias", TensorNames.toHf(b, "token_embd_norm.bias").orElseThrow());
        assertEquals("embeddings.token_type_embeddings.weight", TensorNames.toHf(Architecture.XLM_ROBERTA, "token_types.weight").orElseThrow());
        assertFalse(TensorNames.toHf(b, "output_norm.weight").isPresent());
        assertFalse(TensorNames.toHf(b, "cls.output.weight").isPresent());
        assertFalse(TensorNames.toGguf(b, "model.layers.2.self_attn.q_proj.weight").isPresent());
        assertEquals(List.of("encoder.layer.3.attention.self.query.bias", "encoder.layer.3.attention.self.key.bias",
                "encoder.layer.3.attention.self.value.bias"), TensorNames.splitQkv(b, "blk.3.attn_qkv.bias"));
        Architecture n = Architecture.NOMIC_BERT;
        assertEquals(List.of("layers.0.self_attn.q_proj.weight", "layers.0.self_attn.k_proj.weight", "layers.0.self_attn.v_proj.weight"),
                TensorNames.splitQkv(n, "blk.0.attn_qkv.weight"));
        assertEquals("layers.1.mlp.gate_proj.weight", TensorNames.toHf(n, "blk.1.ffn_gate.weight").orElseThrow());
        assertEquals("layers.1.post_mlp_layernorm.weight", TensorNames.toHf(n, "blk.1.layer_output_norm.weight").orElseThrow());
        assertFalse(TensorNames.toHf(n, "position_embd.weight").isPresent());
        assertEquals(List.of(), TensorNames.splitQkv(Architecture.PHI3, "blk.0.attn_qkv.weight"));
        assertEquals(List.of(), TensorNames.splitQkv(n, "blk.0.attn_q.weight"));
        // bert with a Unigram vocabulary is XLM-RoBERTa, as llama.cpp's converter writes bge-m3
        assertEquals(Optional.of(Architecture.XLM_ROBERTA), Architecture.fromGguf("bert", params(null, "t5")));
        assertEquals(Optional.of(Architecture.BERT), Architecture.fromGguf("bert", params(null, "bert")));
        assertEquals(2, Architecture.XLM_ROBERTA.spec().positionRowsCut(params(null, "t5")));
        assertEquals(0, b.spec().positionRowsCut(params(null, "bert")));
    }

    @Test
    void knownNamesMatchFormatsTable() {
        Architecture q = Architecture.QWEN3MOE;
        assertEquals("token_embd.weight", TensorNames.toGguf(q, "model.embed_tokens.weight").orElseThrow());
        assertEquals("blk.2.attn_output.weight", TensorNames.toGguf(q, "model.layers.2.self_attn.o_proj.weight").orElseThrow());
        assertEquals("blk.2.attn_k_norm.weight", TensorNames.toGguf(q, "model.layers.2.self_attn.k_norm.weight").orElseThrow());
        assertEquals("blk.2.ffn_gate_inp.weight", TensorNames.toGguf(q, "model.layers.2.mlp.gate.weight").orElseThrow());
        assertEquals("blk.2.ffn_down_exps.weight", TensorNames.toGguf(q, "model.layers.2.mlp.switch_mlp.down_proj.weight").orElseThrow());
        assertEquals("blk.0.attn_v.bias", TensorNames.toGguf(Architecture.QWEN2, "model.layers.0.self_attn.v_proj.bias").orElseThrow());
        // architecture-specific tensors are refused elsewhere
        assertFalse(TensorNames.toGguf(Architecture.LLAMA, "model.layers.0.self_attn.q_norm.weight").isPresent());
        assertFalse(TensorNames.toGguf(Architecture.QWEN3, "model.layers.0.mlp.experts.gate_proj.weight").isPresent());
        assertFalse(TensorNames.toGguf(Architecture.LLAMA, "model.layers.0.self_attn.rotary_emb.inv_freq").isPresent());
        assertFalse(TensorNames.toGguf(Architecture.LLAMA, "model.layers.01.mlp.up_proj.weight").isPresent());
        assertFalse(TensorNames.toHf(Architecture.LLAMA, "blk.0.attn_q_norm.weight").isPresent());
        // phi3 keeps the fused projections on both sides; the unfused names are not phi3's
        Architecture phi3 = Architecture.PHI3;
        assertEquals("blk.1.attn_qkv.weight", TensorNames.toGguf(phi3, "model.layers.1.self_attn.qkv_proj.weight").orElseThrow());
        assertEquals("model.layers.1.mlp.gate_up_proj.weight", TensorNames.toHf(phi3, "blk.1.ffn_up.weight").orElseThrow());
        assertEquals("model.layers.1.mlp.up_proj.weight", TensorNames.toHf(Architecture.LLAMA, "blk.1.ffn_up.weight").orElseThrow());
        assertFalse(TensorNames.toGguf(phi3, "model.layers.1.mlp.up_proj.weight").isPresent());
        assertFalse(TensorNames.toGguf(phi3, "model.layers.1.self_attn.q_proj.weight").isPresent());
        assertFalse(TensorNames.toHf(phi3, "blk.1.attn_q.weight").isPresent());
        assertFalse(TensorNames.toGguf(Architecture.QWEN3, "model.layers.1.self_attn.qkv_proj.weight").isPresent());
        assertFalse(TensorNames.permutation(phi3, "blk.1.attn_qkv.weight").isPresent());
        // gemma3: four norms a layer, post_attention_layernorm is not the ffn norm; norms stored as 1 + w
        Architecture g = Architecture.GEMMA3;
        assertEquals("blk.2.post_attention_norm.weight", TensorNames.toGguf(g, "model.layers.2.post_attention_layernorm.weight").orElseThrow());
        assertEquals("model.layers.2.pre_feedforward_layernorm.weight", TensorNames.toHf(g, "blk.2.ffn_norm.weight").orElseThrow());
        assertEquals("model.layers.2.post_feedforward_layernorm.weight", TensorNames.toHf(g, "blk.2.post_ffw_norm.weight").orElseThrow());
        assertEquals("model.layers.2.post_attention_layernorm.weight", TensorNames.toHf(Architecture.QWEN3, "blk.2.ffn_norm.weight").orElseThrow());
        assertFalse(TensorNames.toHf(Architecture.QWEN3, "blk.2.post_ffw_norm.weight").isPresent());
        assertEquals(1f, TensorNames.storedShift(g, "blk.2.attn_k_norm.weight"));
        assertEquals(1f, TensorNames.storedShift(g, "output_norm.weight"));
        assertEquals(0f, TensorNames.storedShift(g, "blk.2.attn_k.weight"));
        assertEquals(0f, TensorNames.storedShift(Architecture.QWEN3, "blk.2.attn_k_norm.weight"));
        // gemma2: gemma3's four norms without q/k norms; gemma (1): post_attention_layernorm is the ffn norm
        Architecture g2 = Architecture.GEMMA2;
        assertEquals("blk.2.post_attention_norm.weight", TensorNames.toGguf(g2, "model.layers.2.post_attention_layernorm.weight").orElseThrow());
        assertEquals("model.layers.2.post_feedforward_layernorm.weight", TensorNames.toHf(g2, "blk.2.post_ffw_norm.weight").orElseThrow());
        assertFalse(TensorNames.toGguf(g2, "model.layers.2.self_attn.q_norm.weight").isPresent());
        assertEquals(1f, TensorNames.storedShift(g2, "blk.2.post_ffw_norm.weight"));
        Architecture g1 = Architecture.GEMMA;
        assertEquals("blk.2.ffn_norm.weight", TensorNames.toGguf(g1, "model.layers.2.post_attention_layernorm.weight").orElseThrow());
        assertFalse(TensorNames.toGguf(g1, "model.layers.2.pre_feedforward_layernorm.weight").isPresent());
        assertEquals(1f, TensorNames.storedShift(g1, "output_norm.weight"));
        assertFalse(TensorNames.permutation(g1, "blk.1.attn_q.weight").isPresent());
    }

    private static ObjectNode gemma2Config() throws Exception {
        return (ObjectNode) JSON.readTree("""
                {"architectures":["Gemma2ForCausalLM"],"model_type":"gemma2","hidden_size":64,"intermediate_size":128,
                 "num_hidden_layers":4,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":32,"vocab_size":560,
                 "max_position_embeddings":512,"rms_norm_eps":1e-5,"rope_theta":10000.0,"query_pre_attn_scalar":32,
                 "sliding_window":8,"attn_logit_softcapping":2.0,"final_logit_softcapping":3.0,"tie_word_embeddings":true,
                 "hidden_activation":"gelu_pytorch_tanh",
                 "layer_types":["sliding_attention","full_attention","sliding_attention","full_attention"]}""");
    }

    /** Gemma 2's KVs as llama.cpp's converter writes them, its refusals, and the config.json rebuilt from them. */
    @Test
    void gemma2BothWays() throws Exception {
        Map<String, GgufKv> kv = ConfigKeys.toGguf(Architecture.GEMMA2, gemma2Config()).stream()
                .collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals(2.0f, kv.get("gemma2.attn_logit_softcapping").value());
        assertEquals(3.0f, kv.get("gemma2.final_logit_softcapping").value());
        assertEquals(8, kv.get("gemma2.attention.sliding_window").value());
        assertEquals(32, kv.get("gemma2.attention.key_length").value());
        for (String bad : List.of("{\"attn_logit_softcapping\":null}", "{\"query_pre_attn_scalar\":256}", "{\"sliding_window\":null}",
                "{\"tie_word_embeddings\":false}", "{\"hidden_activation\":\"silu\"}",
                "{\"layer_types\":[\"full_attention\",\"full_attention\",\"sliding_attention\",\"full_attention\"]}",
                "{\"rope_scaling\":{\"rope_type\":\"linear\",\"factor\":2.0}}")) {
            ObjectNode c = gemma2Config();
            c.setAll((ObjectNode) JSON.readTree(bad));
            assertThrows(IllegalArgumentException.class, () -> ConfigKeys.toGguf(Architecture.GEMMA2, c), bad);
        }
        Map<String, GgufKv> byKey = new java.util.HashMap<>(kv);
        ObjectNode hf = ConfigKeys.toHf(Architecture.GEMMA2, byKey);
        Map<String, Object> values = new HashMap<>();
        byKey.forEach((k, v) -> values.put(k, v.value() instanceof Integer i ? Long.valueOf(i)
                : v.value() instanceof Float f ? Double.valueOf(f) : v.value()));
        GgufParams m = new MapParams(values);
        Architecture.GEMMA2.spec().completeHfConfig(hf, m, "gemma2.", 64, 4, 32);
        ObjectNode src = gemma2Config();
        for (String f : List.of("sliding_window", "attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar",
                "layer_types", "hidden_activation")) {
            assertEquals(src.get(f), hf.get(f), f);
        }
        assertEquals("eager", hf.path("attn_implementation").asText(), "sdpa ignores the attention soft-cap");
        assertThrows(IllegalArgumentException.class, () -> Architecture.GEMMA2.spec().checkGguf(
                new MapParams(Map.of("gemma2.attention.sliding_window_pattern", 3L)), "gemma2."));
    }

    /** Gemma 1's tokenizer extras: add_space_prefix false with a SentencePiece vocabulary, the converter's eot id 107. */
    @Test
    void gemmaTokenizerExtras() {
        Map<String, Object> kv = Architecture.GEMMA.spec().tokenizerExtras(TokenizerTables.TokenizerModel.LLAMA, 560).stream()
                .collect(Collectors.toMap(GgufKv::key, GgufKv::value));
        assertEquals(Map.of(TokenizerTables.ADD_SPACE_PREFIX, false, "tokenizer.ggml.eot_token_id", 107), kv);
        assertEquals(List.of(), Architecture.GEMMA.spec().tokenizerExtras(TokenizerTables.TokenizerModel.GPT2, 100));
        assertEquals(List.of(), Architecture.GEMMA2.spec().tokenizerExtras(TokenizerTables.TokenizerModel.GPT2, 560));
        assertEquals(1, Architecture.GEMMA2.spec().tokenizerExtras(TokenizerTables.TokenizerModel.LLAMA, 560).size());
    }

    @Test
    void olmo2HasPostNormsAndWholeProjectionQkNorms() throws Exception {
        Architecture o = Architecture.OLMO2;
        assertEquals("blk.1.post_attention_norm.weight", TensorNames.toGguf(o, "model.layers.1.post_attention_layernorm.weight").orElseThrow());
        assertEquals("model.layers.1.post_feedforward_layernorm.weight", TensorNames.toHf(o, "blk.1.post_ffw_norm.weight").orElseThrow());
        assertFalse(TensorNames.toGguf(o, "model.layers.1.input_layernorm.weight").isPresent());
        assertFalse(TensorNames.toHf(o, "blk.1.attn_norm.weight").isPresent());
        assertFalse(TensorNames.toHf(o, "blk.1.ffn_norm.weight").isPresent());
        assertFalse(TensorNames.permutation(o, "blk.1.attn_q.weight").isPresent());
        ConfigKeys.Dims d = new ConfigKeys.Dims(64, 2, 4, 2, 16, 400, 128, 0, 0, 0);
        assertEquals(List.of(64L), List.of(TensorNames.rule(o, "attn_q_norm").orElseThrow().shape().apply(d)[0]));
        assertEquals(List.of(32L), List.of(TensorNames.rule(o, "attn_k_norm").orElseThrow().shape().apply(d)[0]));
        JsonNode cfg = JSON.readTree("""
                {"architectures":["Olmo2ForCausalLM"],"model_type":"olmo2","hidden_size":64,"num_hidden_layers":2,
                 "intermediate_size":128,"num_attention_heads":4,"num_key_value_heads":2,"rms_norm_eps":1e-05,
                 "rope_parameters":{"rope_theta":500000.0,"rope_type":"default"},"max_position_embeddings":512,"vocab_size":400}""");
        Set<String> keys = ConfigKeys.toGguf(o, cfg).stream().map(GgufKv::key).collect(Collectors.toSet());
        assertEquals(Set.of("general.architecture", "olmo2.context_length", "olmo2.embedding_length", "olmo2.block_count",
                "olmo2.feed_forward_length", "olmo2.attention.head_count", "olmo2.attention.head_count_kv", "olmo2.rope.freq_base",
                "olmo2.attention.layer_norm_rms_epsilon", "olmo2.vocab_size"), keys);
        JsonNode wideHeads = ((com.fasterxml.jackson.databind.node.ObjectNode) cfg.deepCopy()).put("head_dim", 32);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ConfigKeys.toGguf(o, wideHeads)).getMessage().contains("head_dim"));
        JsonNode olmo3 = ((com.fasterxml.jackson.databind.node.ObjectNode) cfg.deepCopy()).put("sliding_window", 4096);
        assertThrows(IllegalArgumentException.class, () -> ConfigKeys.toGguf(o, olmo3));
        GgufParams swa = params(Map.of("olmo2.attention.sliding_window", 4096L));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> o.spec().checkGguf(swa, "olmo2.")).getMessage().contains("OLMo 3"));
        GgufParams wide = params(Map.of("olmo2.embedding_length", 64L, "olmo2.attention.head_count", 4L, "olmo2.attention.key_length", 32L));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> o.spec().checkGguf(wide, "olmo2.")).getMessage().contains("key_length"));
        o.spec().checkGguf(params((Long) null), "olmo2.");
    }

    /** Granite MoE: input_linear is gate rows then up rows of every expert; no per-expert names; multipliers as scales. */
    @Test
    void graniteMoeFusesGateAndUpAndKeepsItsMultipliers() throws Exception {
        Architecture g = Architecture.GRANITEMOE;
        assertEquals(Optional.of(List.of("blk.3.ffn_gate_exps.weight", "blk.3.ffn_up_exps.weight")),
                TensorNames.splitParts(g, "model.layers.3.block_sparse_moe.input_linear.weight"));
        Assembly input = g.spec().assemblies().getFirst();   // GGUF -> HF: gate then up of every expert, stacked
        assertEquals(List.of(input), g.spec().assemblies());
        assertEquals("block_sparse_moe.input_linear.weight", input.hf());
        assertEquals(List.of("ffn_gate_exps.weight", "ffn_up_exps.weight"), input.gguf());
        assertEquals(1, input.gguf().indexOf("ffn_up_exps.weight"));
        assertTrue(input.isRowSplit());
        assertFalse(input.gguf().contains("ffn_down_exps.weight"));
        assertTrue(Architecture.QWEN3MOE.spec().assemblies().isEmpty());
        assertFalse(Architecture.GPT_OSS.spec().assemblies().stream().anyMatch(Assembly::isRowSplit), "gpt-oss's are GGUF -> HF only");
        assertFalse(TensorNames.splitParts(Architecture.QWEN3MOE, "model.layers.3.block_sparse_moe.input_linear.weight").isPresent());
        assertFalse(TensorNames.expertSlice(g, "blk.3.ffn_down_exps.weight", 0).isPresent(), "no per-expert HF names");
        assertFalse(TensorNames.perExpert(g, "model.layers.3.block_sparse_moe.experts.0.gate.weight").isPresent());
        assertTrue(TensorNames.permutation(g, "blk.0.attn_q.weight").isPresent(), "llama attention: permuted");
        JsonNode cfg = JSON.readTree("""
                {"architectures":["GraniteMoeForCausalLM"],"model_type":"granitemoe","hidden_size":64,"num_hidden_layers":2,
                 "intermediate_size":128,"num_attention_heads":4,"num_key_value_heads":2,"rms_norm_eps":1e-06,
                 "rope_parameters":{"rope_theta":10000.0,"rope_type":"default"},"max_position_embeddings":512,"vocab_size":400,
                 "num_local_experts":4,"num_experts_per_tok":2,"embedding_multiplier":12.0,"residual_multiplier":0.22,
                 "attention_multiplier":0.015625,"logits_scaling":8.0}""");
        Map<String, GgufKv> kv = ConfigKeys.toGguf(g, cfg).stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals(0.015625f, kv.get("granitemoe.attention.scale").value());
        assertEquals(12f, kv.get("granitemoe.embedding_scale").value());
        assertEquals(0.22f, kv.get("granitemoe.residual_scale").value());
        assertEquals(8f, kv.get("granitemoe.logit_scale").value());
        assertEquals(4, kv.get("granitemoe.expert_count").value());
        assertEquals(16, kv.get("granitemoe.rope.dimension_count").value());
        assertEquals(new ConfigKeys.Dims(64, 2, 4, 2, 16, 400, 128, 4, 128, 0), ConfigKeys.dims(g, cfg));
        JsonNode noLogits = ((com.fasterxml.jackson.databind.node.ObjectNode) cfg.deepCopy()).without("logits_scaling");
        assertEquals(1f, ConfigKeys.toGguf(g, noLogits).stream().filter(k -> k.key().equals("granitemoe.logit_scale"))
                .findFirst().orElseThrow().value(), "llama.cpp requires logit_scale: transformers' default");
        JsonNode shared = ((com.fasterxml.jackson.databind.node.ObjectNode) cfg.deepCopy()).put("shared_intermediate_size", 64);
        assertThrows(IllegalArgumentException.class, () -> ConfigKeys.toGguf(g, shared));
        JsonNode wide = ((com.fasterxml.jackson.databind.node.ObjectNode) cfg.deepCopy()).put("head_dim", 32);
        assertThrows(IllegalArgumentException.class, () -> ConfigKeys.toGguf(g, wide));
        assertTrue(g.spec().claims(params((Long) null)));
    }

    @Test
    void perExpertNamesRoundTrip() {
        TensorNames.ExpertSlice s = TensorNames.perExpert(Architecture.QWEN3MOE, "model.layers.4.mlp.experts.11.up_proj.weight").orElseThrow();
        assertEquals(new TensorNames.ExpertSlice("blk.4.ffn_up_exps.weight", 4, 11, "model.layers.4.mlp.experts.11.up_proj.weight"), s);
        assertEquals(Optional.of(s), TensorNames.expertSlice(Architecture.QWEN3MOE, "blk.4.ffn_up_exps.weight", 11));
        assertFalse(TensorNames.perExpert(Architecture.QWEN3, "model.layers.4.mlp.experts.11.up_proj.weight").isPresent());
        assertFalse(TensorNames.expertSlice(Architecture.QWEN3MOE, "blk.4.ffn_up.weight", 0).isPresent());
        assertFalse(TensorNames.expertSlice(Architecture.QWEN3, "blk.4.ffn_up_exps.weight", 0).isPresent());
        // Mixtral: w1 = gate, w3 = up, w2 = down (llama.cpp's tensor_mapping.py)
        TensorNames.ExpertSlice m = TensorNames.perExpert(Architecture.MIXTRAL, "model.layers.1.block_sparse_moe.experts.7.w3.weight").orElseThrow();
        assertEquals(new TensorNames.ExpertSlice("blk.1.ffn_up_exps.weight", 1, 7, "model.layers.1.block_sparse_moe.experts.7.w3.weight"), m);
        assertEquals("model.layers.1.block_sparse_moe.experts.2.w2.weight",
                TensorNames.expertSlice(Architecture.MIXTRAL, "blk.1.ffn_down_exps.weight", 2).orElseThrow().hfName());
        assertEquals("model.layers.1.block_sparse_moe.experts.2.w1.weight",
                TensorNames.expertSlice(Architecture.MIXTRAL, "blk.1.ffn_gate_exps.weight", 2).orElseThrow().hfName());
        assertFalse(TensorNames.perExpert(Architecture.MIXTRAL, "model.layers.1.mlp.experts.7.up_proj.weight").isPresent());
        assertFalse(TensorNames.perExpert(Architecture.MIXTRAL, "model.layers.1.block_sparse_moe.experts.7.w4.weight").isPresent());
        assertEquals("model.layers.3.mlp.shared_expert_gate.weight", TensorNames.toHf(Architecture.QWEN2MOE, "blk.3.ffn_gate_inp_shexp.weight").orElseThrow());
    }

    @Test
    void permutationMatchesVectorAndInverts() {
        JsonNode v = Vectors.json("llama_qk_permute.json");
        for (String proj : List.of("q_proj", "k_proj")) {
            JsonNode t = v.get(proj);
            int heads = t.has("n_head") ? t.get("n_head").asInt() : t.get("n_head_used").asInt();
            int rows = t.get("hf_rows").size();
            QkPermutation p = new QkPermutation(heads, rows);
            for (int r = 0; r < rows; r++) {
                int src = p.hfRowOf(r);
                assertEquals(t.get("source_row_for_output_row").get(r).asInt(), src, proj + " row " + r);
                assertEquals(t.get("gguf_rows").get(r), t.get("hf_rows").get(src));
                assertEquals(r, p.ggufRowOf(src));
            }
        }
        QkPermutation big = QkPermutation.of(QkPermutation.Which.K, 32, 8, 8 * 128);
        assertEquals(128, big.headDim());
        for (int r = 0; r < big.rows(); r++) {
            assertEquals(r, big.hfRowOf(big.ggufRowOf(r)));
        }
        assertThrows(IllegalArgumentException.class, () -> new QkPermutation(3, 8));
        assertTrue(TensorNames.permutation(Architecture.LLAMA, "blk.1.attn_k.weight").isPresent());
        assertTrue(TensorNames.permutation(Architecture.LLAMA, "blk.1.attn_q.bias").isPresent());
        assertFalse(TensorNames.permutation(Architecture.QWEN3, "blk.1.attn_q.weight").isPresent());
        assertFalse(TensorNames.permutation(Architecture.LLAMA, "blk.1.attn_v.weight").isPresent());
    }

    @Test
    void architecturesResolveBothWays() throws Exception {
        for (Architecture a : Architecture.values()) {
            assertEquals(Optional.of(a), Architecture.fromGguf(a.ggufName(), a == Architecture.GLMOCR   // glm4 with M-RoPE sections
                    ? new MapParams(Map.of("glm4.rope.dimension_sections", new int[] {2, 3, 3, 0}))
                    : params(a == Architecture.MIXTRAL ? 8L : null, a == Architecture.XLM_ROBERTA ? "t5" : "bert")));
            if (a.spec().encoder()) {   // GGUF -> HF only: no synthesized GGUF
                var no = assertInstanceOf(Architecture.Resolution.Unsupported.class, Architecture.fromHf(a.hfArchitecture(), null));
                assertTrue(no.reason().contains("embedding (encoder) model"), no.reason());
                assertInstanceOf(Architecture.Resolution.Unsupported.class, Architecture.fromHf(null, a.hfModelType()));
                continue;
            }
            for (String hf : a.hfArchitectures()) {
                assertEquals(new Architecture.Resolution.Supported(a), Architecture.fromHf(hf, null));
            }
            assertEquals(new Architecture.Resolution.Supported(a), Architecture.fromHf(null, a.hfModelType()));
        }
        assertEquals(new Architecture.Resolution.Supported(Architecture.LLAMA), Architecture.fromHf("MistralForCausalLM", "mistral"));
        assertEquals(new Architecture.Resolution.Supported(Architecture.PHI3), Architecture.fromHf("Phi3ForCausalLM", "phi3"));
        assertEquals(Optional.of(Architecture.LLAMA), Architecture.fromGguf("llama", params(0L)));
        assertEquals(Optional.empty(), Architecture.fromGguf("mixtral", params(8L)));
        assertEquals(new Architecture.Resolution.Supported(Architecture.MIXTRAL), Architecture.fromHf("MixtralForCausalLM", "mixtral"));
        assertEquals(new Architecture.Resolution.Supported(Architecture.QWEN2MOE), Architecture.fromHf(null, "qwen2_moe"));
        assertEquals(new Architecture.Resolution.Supported(Architecture.GEMMA3), Architecture.fromHf(null, "gemma3_text"));
        assertEquals(new Architecture.Resolution.Supported(Architecture.GEMMA2), Architecture.fromHf("Gemma2ForCausalLM", "gemma2"));
        assertEquals(new Architecture.Resolution.Supported(Architecture.GEMMA), Architecture.fromHf(null, "gemma"));
        var gemma = assertInstanceOf(Architecture.Resolution.Unsupported.class, Architecture.fromHf("Gemma3nForCausalLM", "gemma3n_text"));
        assertTrue(gemma.reason().contains("Gemma 3n"), gemma.reason());
        assertInstanceOf(Architecture.Resolution.Unsupported.class, Architecture.fromHf("Gemma3ForConditionalGeneration", "gemma3"));
        var deepseek = assertInstanceOf(Architecture.Resolution.Unsupported.class, Architecture.fromHf("DeepseekV2ForCausalLM", null));
        assertTrue(deepseek.reason().contains("mixture-of-experts"), deepseek.reason());
        assertInstanceOf(Architecture.Resolution.Unsupported.class, Architecture.fromHf(null, null));
    }

    @Test
    void configKeysHaveLlamaCppTypesAndRoundTrip() throws Exception {
        JsonNode cfg = JSON.readTree("""
                {"architectures":["Qwen3MoeForCausalLM"],"model_type":"qwen3_moe","hidden_size":32,"num_hidden_layers":2,
                 "intermediate_size":64,"moe_intermediate_size":16,"num_attention_heads":4,"num_key_value_heads":2,
                 "head_dim":16,"rms_norm_eps":1e-06,"rope_parameters":{"rope_theta":1000000.0,"rope_type":"default"},
                 "num_local_experts":4,"num_experts_per_tok":2,"max_position_embeddings":4096,"vocab_size":300}""");
        List<GgufKv> kvs = ConfigKeys.toGguf(Architecture.QWEN3MOE, cfg);
        Map<String, GgufKv> byKey = kvs.stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals(kvs.size(), byKey.size());
        assertEquals("qwen3moe", byKey.get("general.architecture").value());
        assertEquals(GgufValueType.UINT32, byKey.get("qwen3moe.block_count").type());
        assertEquals(2, byKey.get("qwen3moe.block_count").value());
        assertEquals(4, byKey.get("qwen3moe.expert_count").value());
        assertEquals(16, byKey.get("qwen3moe.expert_feed_forward_length").value());
        assertEquals(16, byKey.get("qwen3moe.attention.key_length").value());
        assertEquals(1e-6f, byKey.get("qwen3moe.attention.layer_norm_rms_epsilon").value());
        assertEquals(1e6f, byKey.get("qwen3moe.rope.freq_base").value());
        JsonNode back = ConfigKeys.toHf(Architecture.QWEN3MOE, byKey);
        for (String f : List.of("hidden_size", "num_hidden_layers", "intermediate_size", "moe_intermediate_size",
                "num_attention_heads", "num_key_value_heads", "head_dim", "num_experts_per_tok", "max_position_embeddings", "vocab_size")) {
            assertEquals(cfg.get(f).asLong(), back.get(f).asLong(), f);
        }
        assertEquals(1e-6, back.get("rms_norm_eps").asDouble());
        assertEquals(4, back.get("num_experts").asInt());
        assertEquals("Qwen3MoeForCausalLM", back.get("architectures").get(0).asText());
        ConfigKeys.Dims d = ConfigKeys.dims(Architecture.QWEN3MOE, cfg);
        assertEquals(new ConfigKeys.Dims(32, 2, 4, 2, 16, 300, 64, 4, 16, 0), d);
    }

    @Test
    void llamaRopeScalingAndHostileConfigs() throws Exception {
        JsonNode cfg = JSON.readTree("""
                {"architectures":["LlamaForCausalLM"],"hidden_size":64,"num_hidden_layers":1,"intermediate_size":128,
                 "num_attention_heads":4,"rms_norm_eps":1e-05,"rope_theta":500000.0,"max_position_embeddings":131072,
                 "vocab_size":100,"rope_scaling":{"rope_type":"llama3","factor":8.0,"low_freq_factor":1.0,
                 "high_freq_factor":4.0,"original_max_position_embeddings":8192}}""");
        Map<String, GgufKv> byKey = ConfigKeys.toGguf(Architecture.LLAMA, cfg).stream()
                .collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals(16, byKey.get("llama.rope.dimension_count").value());
        assertEquals(4, byKey.get("llama.attention.head_count_kv").value());
        assertFalse(byKey.containsKey("llama.rope.scaling.type"));
        float[] f = RopeFreqs.llama3(ConfigKeys.ropeScaling(cfg).orElseThrow(), 500000f, 16);
        assertEquals(8, f.length);
        assertEquals(1.0f, f[0]);
        assertEquals(8.0f, f[7]);
        JsonNode yarn = JSON.readTree("""
                {"hidden_size":64,"num_hidden_layers":1,"intermediate_size":128,"num_attention_heads":4,"rms_norm_eps":1e-05,
                 "max_position_embeddings":4096,"vocab_size":100,"rope_scaling":{"type":"yarn","factor":4.0,"original_max_position_embeddings":1024}}""");
        Map<String, GgufKv> y = ConfigKeys.toGguf(Architecture.QWEN2, yarn).stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals("yarn", y.get("qwen2.rope.scaling.type").value());
        assertEquals(1024, y.get("qwen2.rope.scaling.original_context_length").value());
        JsonNode back = ConfigKeys.toHf(Architecture.QWEN2, y);
        assertEquals(4.0, back.get("rope_scaling").get("factor").asDouble());
        for (String bad : List.of("{\"hidden_size\":-1}", "{\"hidden_size\":\"64\"}", "{\"hidden_size\":64.5}")) {
            JsonNode h = ((com.fasterxml.jackson.databind.node.ObjectNode) cfg.deepCopy()).setAll(
                    (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(bad));
            assertThrows(IllegalArgumentException.class, () -> ConfigKeys.toGguf(Architecture.LLAMA, h), bad);
        }
        JsonNode missing = ((com.fasterxml.jackson.databind.node.ObjectNode) cfg.deepCopy()).without("rms_norm_eps");
        assertThrows(IllegalArgumentException.class, () -> ConfigKeys.toGguf(Architecture.LLAMA, missing));
    }

    @Test
    void tokenizerTablesRoundTrip() throws Exception {
        for (TokenizerTables.PreTokenizer p : TokenizerTables.PreTokenizer.values()) {
            assertEquals(Optional.of(p), TokenizerTables.PreTokenizer.fromHf(p.toHf()));
            assertEquals(Optional.of(p), TokenizerTables.PreTokenizer.fromGguf(p.ggufName()));
        }
        // Qwen2.5's own tokenizer.json pre_tokenizer, verbatim
        JsonNode qwen = JSON.readTree("""
                {"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":
                "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"},
                "behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":false,"use_regex":false}]}""");
        assertEquals(Optional.of(TokenizerTables.PreTokenizer.QWEN2), TokenizerTables.PreTokenizer.fromHf(qwen));
        assertFalse(TokenizerTables.PreTokenizer.fromHf(JSON.readTree("{\"type\":\"Whitespace\"}")).isPresent());
        for (TokenizerTables.TokenType t : TokenizerTables.TokenType.values()) {
            assertEquals(Optional.of(t), TokenizerTables.TokenType.byId(t.id()));
        }
        assertEquals(6, TokenizerTables.TokenType.BYTE.id());
        assertTrue(TokenizerTables.isByteToken("<0x0A>"));
        assertFalse(TokenizerTables.isByteToken("<0x0G>"));
        assertTrue(TokenizerTables.looksSpecial("<|im_start|>"));
        assertFalse(TokenizerTables.looksSpecial("hello"));
        assertEquals("tokenizer.ggml.seperator_token_id", TokenizerTables.SpecialToken.SEP.ggufKey());
        JsonNode spm = JSON.readTree("{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true},\"pre_tokenizer\":null}");
        assertEquals(Optional.of(TokenizerTables.TokenizerModel.LLAMA), TokenizerTables.TokenizerModel.fromHf(spm));
        JsonNode bl = JSON.readTree("{\"model\":{\"type\":\"BPE\"},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}");
        assertEquals(Optional.of(TokenizerTables.TokenizerModel.GPT2), TokenizerTables.TokenizerModel.fromHf(bl));
    }

    @Test
    void tokenizerKvsOfAByteFallbackBpe() throws Exception {
        JsonNode tok = JSON.readTree("""
                {"model":{"type":"BPE","byte_fallback":true,"vocab":{"<unk>":0,"<s>":1,"</s>":2,"<0x0A>":3,"a":4,"b":5,"ab":6,"abb":7},
                 "merges":["a b","ab b"]},
                 "added_tokens":[{"id":0,"content":"<unk>","special":true},{"id":1,"content":"<s>","special":true},
                                 {"id":2,"content":"</s>","special":true}]}""");
        JsonNode tc = JSON.readTree("{\"bos_token\":\"<s>\",\"eos_token\":{\"content\":\"</s>\"},\"add_bos_token\":true,\"chat_template\":\"{{x}}\"}");
        Map<String, GgufKv> kv = TokenizerKvs.of(tok, tc, null, 9).stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals("llama", kv.get("tokenizer.ggml.model").value());
        assertEquals("default", kv.get("tokenizer.ggml.pre").value());
        assertFalse(kv.containsKey(TokenizerTables.ADD_SPACE_PREFIX), "llama.cpp's default (true) for a llama vocabulary");
        assertEquals(List.of("<unk>", "<s>", "</s>", "<0x0A>", "a", "b", "ab", "abb", "[PAD8]"),
                ((dev.modelfs.format.gguf.GgufArray) kv.get("tokenizer.ggml.tokens").value()).values());
        assertEquals(List.of(0f, 0f, 0f, 0f, 0f, 0f, -1f, -2f, 0f),
                ((dev.modelfs.format.gguf.GgufArray) kv.get("tokenizer.ggml.scores").value()).values());
        assertEquals(List.of(3, 3, 3, 6, 1, 1, 1, 1, 5),
                ((dev.modelfs.format.gguf.GgufArray) kv.get("tokenizer.ggml.token_type").value()).values());
        assertEquals(1, kv.get("tokenizer.ggml.bos_token_id").value());
        assertEquals(2, kv.get("tokenizer.ggml.eos_token_id").value());
        assertEquals(true, kv.get(TokenizerTables.ADD_BOS).value());
        assertEquals("{{x}}", kv.get(TokenizerTables.CHAT_TEMPLATE).value());
        Map<String, GgufKv> gemma = TokenizerKvs.of(tok, tc, null, 9, Architecture.GEMMA3.spec()).stream()
                .collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals(false, gemma.get(TokenizerTables.ADD_SPACE_PREFIX).value(), "Gemma's SentencePiece has no dummy prefix");
        JsonNode dup = JSON.readTree("""
                {"model":{"type":"BPE","byte_fallback":true,"vocab":{"a":0,"b":1},"merges":[]},
                 "added_tokens":[{"id":2,"content":"a","special":false}]}""");
        assertThrows(IllegalArgumentException.class, () -> TokenizerKvs.of(dup, null, null, 3));
        assertThrows(IllegalArgumentException.class, () -> TokenizerKvs.of(tok, null, null, 7), "id 7 beyond vocab 7");
        JsonNode wordLevel = JSON.readTree("{\"model\":{\"type\":\"WordLevel\",\"vocab\":{}}}");
        assertThrows(IllegalArgumentException.class, () -> TokenizerKvs.of(wordLevel, null, null, 3));
    }

    /** The special-token keys as gguf-py's SpecialVocab derives them (mask, add_sep from the pair template). */
    @Test
    void tokenizerKvsSpecialsAsTheConverterWritesThem() throws Exception {
        JsonNode tok = JSON.readTree("""
                {"model":{"type":"BPE","byte_fallback":true,"vocab":{"<pad>":0,"<bos>":1,"<eos>":2,"<mask>":3,"a":4},"merges":[]},
                 "added_tokens":[{"id":0,"content":"<pad>","special":true},{"id":1,"content":"<bos>","special":true},
                                 {"id":2,"content":"<eos>","special":true},{"id":3,"content":"<mask>","special":true}],
                 "post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<bos>"}},{"Sequence":{"id":"A"}}],
                   "pair":[{"SpecialToken":{"id":"<bos>"}},{"Sequence":{"id":"A"}},{"SpecialToken":{"id":"<eos>"}},{"Sequence":{"id":"B"}}]}}""");
        JsonNode tc = JSON.readTree("{\"bos_token\":\"<bos>\",\"eos_token\":\"<eos>\",\"pad_token\":\"<pad>\",\"mask_token\":\"<mask>\"}");
        Map<String, GgufKv> kv = TokenizerKvs.of(tok, tc, null, 5).stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals(3, kv.get("tokenizer.ggml.mask_token_id").value());
        assertEquals(0, kv.get("tokenizer.ggml.padding_token_id").value());
        assertEquals(true, kv.get(TokenizerTables.ADD_BOS).value());
        assertEquals(true, kv.get(TokenizerTables.ADD_SEP).value(), "A <eos> B: a separator");
        assertFalse(kv.containsKey(TokenizerTables.ADD_EOS), "no trailing special token, no add_eos_token");
        JsonNode sameBos = JSON.readTree(tok.toString().replace("{\"SpecialToken\":{\"id\":\"<eos>\"}},{\"Sequence\":{\"id\":\"B\"}}",
                "{\"SpecialToken\":{\"id\":\"<bos>\"}},{\"Sequence\":{\"id\":\"B\"}}"));
        Map<String, GgufKv> kv2 = TokenizerKvs.of(sameBos, tc, null, 5).stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals(false, kv2.get(TokenizerTables.ADD_SEP).value(), "A <bos> B: no separator (Llama 2, Gemma)");
    }
}
