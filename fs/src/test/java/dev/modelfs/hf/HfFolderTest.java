package dev.modelfs.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class HfFolderTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    static GgufKv kv(String k, GgufValueType t, Object v) {
        return new GgufKv(k, t, v, 0, 0);
    }

    static GgufKv strings(String k, List<String> v) {
        return kv(k, GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, List.copyOf(v)));
    }

    /** A 1-layer model of {@code arch} (hidden 64, 4 heads of 16, 2 kv heads), tensors F32 except as given. */
    static GgufFile model(String arch, boolean tied, List<String> extraTensors, List<GgufKv> extraKvs) {
        List<GgufKv> kvs = new ArrayList<>(List.of(
                kv("general.architecture", GgufValueType.STRING, arch),
                kv(arch + ".embedding_length", GgufValueType.UINT32, 64),
                kv(arch + ".block_count", GgufValueType.UINT32, 1),
                kv(arch + ".feed_forward_length", GgufValueType.UINT32, 128),
                kv(arch + ".attention.head_count", GgufValueType.UINT32, 4),
                kv(arch + ".attention.head_count_kv", GgufValueType.UINT32, 2),
                kv(arch + ".attention.layer_norm_rms_epsilon", GgufValueType.FLOAT32, 1e-5f),
                kv(arch + ".context_length", GgufValueType.UINT32, 512),
                kv("tokenizer.ggml.model", GgufValueType.STRING, "gpt2"),
                kv("tokenizer.ggml.pre", GgufValueType.STRING, "qwen2"),
                strings("tokenizer.ggml.tokens", List.of("a", "b", "ab", "<|end|>")),
                kv("tokenizer.ggml.token_type", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(1, 1, 1, 3))),
                strings("tokenizer.ggml.merges", List.of("a b")),
                kv("tokenizer.ggml.eos_token_id", GgufValueType.UINT32, 3)));
        kvs.addAll(extraKvs);
        List<String> attn = arch.equals("phi3") ? List.of("blk.0.attn_qkv.weight:64,128")
                : List.of("blk.0.attn_q.weight:64,64", "blk.0.attn_k.weight:64,32", "blk.0.attn_v.weight:64,32");
        List<String> names = new ArrayList<>(List.of("token_embd.weight:64,4", "output_norm.weight:64", "blk.0.attn_norm.weight:64"));
        names.addAll(attn);
        names.addAll(List.of("blk.0.attn_output.weight:64,64", "blk.0.ffn_norm.weight:64"));
        if (!tied) {
            names.add("output.weight:64,4");
        }
        names.addAll(extraTensors);
        return new GgufFile(3, 32, kvs, tensors(names), 4096);
    }

    /** Tensors laid out one after the other (32-byte aligned) from {@code name:ne0,ne1[:TYPE]} specs, F32 unless a type is given. */
    static List<GgufTensorInfo> tensors(List<String> specs) {
        List<GgufTensorInfo> tensors = new ArrayList<>();
        long off = 0;
        for (String n : specs) {
            String[] p = n.split(":");
            long[] ne = java.util.Arrays.stream(p[1].split(",")).mapToLong(Long::parseLong).toArray();
            GgmlType type = p.length > 2 ? GgmlType.valueOf(p[2]) : GgmlType.F32;
            GgufTensorInfo t = new GgufTensorInfo(p[0], ne, type, off);
            tensors.add(t);
            off += (t.byteSize() + 31) / 32 * 32;
        }
        return tensors;
    }

    static Map<String, HfTensor> byName(HfFolder f) {
        return f.tensors().stream().collect(Collectors.toMap(HfTensor::name, Function.identity()));
    }

    @Test
    void llamaTensorsAreRenamedAndQkRowsInversePermuted() throws Exception {
        HfFolder f = HfFolder.of(model("llama", false, List.of("blk.0.ffn_gate.weight:64,128:Q8_0",
                "blk.0.ffn_up.weight:64,128", "blk.0.ffn_down.weight:128,64"), List.of()));
        Map<String, HfTensor> t = byName(f);
        assertEquals(12, t.size());
        assertArrayEquals(new long[] {64, 64}, t.get("model.layers.0.self_attn.q_proj.weight").shape());
        HfTensor q = t.get("model.layers.0.self_attn.q_proj.weight");
        // head dim 16: HF row 0..7 (first half) come from GGUF rows 0,2,..,14; HF row 8 from GGUF row 1
        assertEquals(0, q.sourceRow().applyAsLong(0));
        assertEquals(2, q.sourceRow().applyAsLong(1));
        assertEquals(1, q.sourceRow().applyAsLong(8));
        assertEquals(17, q.sourceRow().applyAsLong(24));
        HfTensor k = t.get("model.layers.0.self_attn.k_proj.weight");
        assertEquals(32, k.rows());
        assertEquals(3, k.sourceRow().applyAsLong(9));
        assertNull(t.get("model.layers.0.self_attn.v_proj.weight").sourceRow());
        assertTrue(t.containsKey("lm_head.weight"));
        JsonNode c = JSON.readTree(f.config());
        assertEquals("LlamaForCausalLM", c.get("architectures").get(0).asText());
        assertEquals(16, c.get("head_dim").asInt());
        assertEquals(4, c.get("vocab_size").asInt());
        assertFalse(c.get("tie_word_embeddings").asBoolean());
        assertEquals(3, c.get("eos_token_id").asInt());
    }

    /**
     * gpt-oss: {@code config.json}'s eos is {@code <|return|>}, as the published gpt-oss config says, where Ollama's GGUF has
     * {@code <|endoftext|>}; {@code generation_config.json} lists the stops; a llama model keeps the GGUF's eos.
     */
    @Test
    void gptOssConfigEosIsTheFirstStopToken() throws Exception {
        GgufFile g = HfAssembliesTest.gguf("gpt-oss", HfAssembliesTest.gptOssKvs(), HfAssembliesTest.gptOssTensors(true));
        List<String> replaced = List.of("tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.eos_token_id");
        List<GgufKv> kvs = new ArrayList<>(g.kvs().stream().filter(k -> !replaced.contains(k.key())).toList());
        kvs.addAll(List.of(strings("tokenizer.ggml.tokens", List.of("a", "b", "<|endoftext|>", "<|return|>")),
                kv("tokenizer.ggml.token_type", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(1, 1, 3, 3))),
                kv("tokenizer.ggml.eos_token_id", GgufValueType.UINT32, 2)));
        HfFolder f = HfFolder.of(new GgufFile(3, 32, kvs, g.tensors(), 4096));
        assertEquals(3, JSON.readTree(f.config()).get("eos_token_id").asInt());
        assertEquals("[3,2]", JSON.readTree(f.generationConfig()).get("eos_token_id").toString());
        HfFolder llama = HfFolder.of(model("llama", false, List.of(), List.of()));
        assertEquals(3, JSON.readTree(llama.config()).get("eos_token_id").asInt());
        assertEquals(3, JSON.readTree(llama.generationConfig()).get("eos_token_id").asInt());
    }

    @Test
    void tiedEmbeddingsHaveNoLmHead() throws Exception {
        HfFolder f = HfFolder.of(model("qwen3", true, List.of("blk.0.attn_q_norm.weight:16", "blk.0.attn_k_norm.weight:16"), List.of()));
        assertFalse(byName(f).containsKey("lm_head.weight"));
        assertTrue(byName(f).containsKey("model.layers.0.self_attn.q_norm.weight"));
        assertNull(byName(f).get("model.layers.0.self_attn.q_proj.weight").sourceRow(), "qwen3 rows are not permuted");
        assertTrue(JSON.readTree(f.config()).get("tie_word_embeddings").asBoolean());
    }

    @Test
    void stackedExpertsAreSlicedPerExpert() {
        HfFolder f = HfFolder.of(model("qwen3moe", true, List.of("blk.0.ffn_gate_inp.weight:64,4",
                "blk.0.ffn_gate_exps.weight:64,32,4:Q8_0", "blk.0.ffn_up_exps.weight:64,32,4",
                "blk.0.ffn_down_exps.weight:32,64,4"), List.of()));
        Map<String, HfTensor> t = byName(f);
        HfTensor e2 = t.get("model.layers.0.mlp.experts.2.gate_proj.weight");
        assertArrayEquals(new long[] {32, 64}, e2.shape());
        long per = GgmlType.Q8_0.rowBytes(64) * 32;
        assertEquals(2 * per, e2.byteOffset());
        assertEquals(per, e2.byteLength());
        assertArrayEquals(new long[] {64, 32}, t.get("model.layers.0.mlp.experts.3.down_proj.weight").shape());
        assertTrue(t.containsKey("model.layers.0.mlp.gate.weight"));
    }

    /** A llama GGUF with experts is Mixtral: block_sparse_moe names (w1 gate, w3 up, w2 down), q/k still un-permuted. */
    @Test
    void llamaWithExpertsIsMixtral() throws Exception {
        List<String> moe = List.of("blk.0.ffn_gate_inp.weight:64,4", "blk.0.ffn_gate_exps.weight:64,128,4",
                "blk.0.ffn_up_exps.weight:64,128,4", "blk.0.ffn_down_exps.weight:128,64,4");
        HfFolder f = HfFolder.of(model("llama", false, moe, List.of(kv("llama.expert_count", GgufValueType.UINT32, 4),
                kv("llama.expert_used_count", GgufValueType.UINT32, 2))));
        Map<String, HfTensor> t = byName(f);
        assertEquals(dev.modelfs.arch.Architecture.MIXTRAL, f.arch());
        assertTrue(t.containsKey("model.layers.0.block_sparse_moe.gate.weight"));
        assertArrayEquals(new long[] {128, 64}, t.get("model.layers.0.block_sparse_moe.experts.3.w1.weight").shape());
        assertArrayEquals(new long[] {128, 64}, t.get("model.layers.0.block_sparse_moe.experts.3.w3.weight").shape());
        assertArrayEquals(new long[] {64, 128}, t.get("model.layers.0.block_sparse_moe.experts.3.w2.weight").shape());
        assertEquals(4 * 3 + 1 + 9, t.size(), "4 experts x 3 + router + 9 others");
        assertTrue(t.get("model.layers.0.self_attn.q_proj.weight").sourceRow() != null, "llama attention: q rows permuted");
        JsonNode c = JSON.readTree(f.config());
        assertEquals("MixtralForCausalLM", c.get("architectures").get(0).asText());
        assertEquals(4, c.get("num_local_experts").asInt());
        assertEquals(2, c.get("num_experts_per_tok").asInt());
        assertThrows(HfUnsupported.class, () -> HfFolder.of(model("llama", false, moe, List.of())),
                "experts in a llama GGUF without expert_count have no Hugging Face name");
    }

    /** Granite MoE: input_linear assembled from ffn_gate_exps and ffn_up_exps, expert by expert; multipliers from the scales. */
    @Test
    void graniteMoeFusesGateAndUpExpertByExpert() throws Exception {
        List<String> moe = List.of("blk.0.ffn_gate_inp.weight:64,4", "blk.0.ffn_gate_exps.weight:64,32,4:Q8_0",
                "blk.0.ffn_up_exps.weight:64,32,4:Q8_0", "blk.0.ffn_down_exps.weight:32,64,4");
        List<GgufKv> kvs = List.of(kv("granitemoe.expert_count", GgufValueType.UINT32, 4), kv("granitemoe.expert_used_count", GgufValueType.UINT32, 2),
                kv("granitemoe.attention.scale", GgufValueType.FLOAT32, 0.015625f), kv("granitemoe.residual_scale", GgufValueType.FLOAT32, 0.22f),
                kv("granitemoe.logit_scale", GgufValueType.FLOAT32, 8f));
        HfFolder f = HfFolder.of(model("granitemoe", false, moe, kvs));
        Map<String, HfTensor> t = byName(f);
        HfTensor in = t.get("model.layers.0.block_sparse_moe.input_linear.weight");
        assertArrayEquals(new long[] {4, 64, 64}, in.shape());
        HfTensor.Assembled a = in.assembled();   // per expert (batch): the gate rows, then the up rows
        assertEquals(4, a.batches());
        assertEquals(2, a.parts().size());
        assertEquals("blk.0.ffn_gate_exps.weight", a.parts().get(0).sources().getFirst().name());
        assertEquals("blk.0.ffn_up_exps.weight", a.parts().get(1).sources().getFirst().name());
        for (HfTensor.Assembled.Part p : a.parts()) {
            assertEquals(1, p.sources().size());
            assertFalse(p.transposed());
            assertArrayEquals(new long[] {4, 32, 64}, HfTensor.Assembled.geometry(p.sources().getFirst()));
        }
        assertFalse(t.containsKey("model.layers.0.block_sparse_moe.experts.0.gate.weight"), "no per-expert names");
        assertEquals(3, t.keySet().stream().filter(n -> n.contains("block_sparse_moe")).count(), "router, input_linear, output_linear");
        assertArrayEquals(new long[] {4, 64, 32}, t.get("model.layers.0.block_sparse_moe.output_linear.weight").shape());
        assertArrayEquals(new long[] {4, 64}, t.get("model.layers.0.block_sparse_moe.router.layer.weight").shape());
        assertNotNull(t.get("model.layers.0.self_attn.q_proj.weight").sourceRow(), "llama attention: rows permuted");
        JsonNode c = JSON.readTree(f.config());
        assertEquals("GraniteMoeForCausalLM", c.get("architectures").get(0).asText());
        assertEquals(0.015625, c.get("attention_multiplier").asDouble());
        assertEquals(0.22, c.get("residual_multiplier").asDouble());
        assertEquals(1.0, c.get("embedding_multiplier").asDouble(), "absent: 1");
        assertEquals(8.0, c.get("logits_scaling").asDouble());
        assertEquals(4, c.get("num_local_experts").asInt());
        JsonNode dflt = JSON.readTree(HfFolder.of(model("granitemoe", false, moe, kvs.subList(0, 2))).config());
        assertEquals(0.25, dflt.get("attention_multiplier").asDouble(), "absent attention.scale: llama.cpp's 1/sqrt(head_dim)");
        HfUnsupported half = assertThrows(HfUnsupported.class, () -> HfFolder.of(model("granitemoe", false,
                List.of("blk.0.ffn_gate_inp.weight:64,4", "blk.0.ffn_gate_exps.weight:64,32,4", "blk.0.ffn_down_exps.weight:32,64,4"), kvs)));
        assertTrue(half.getMessage().contains("input_linear"), half.getMessage());
    }

    /** Qwen2 MoE: routed experts per expert, the shared expert and its [1, hidden] gate, qwen2moe's config fields. */
    @Test
    void qwen2MoeHasSharedExpertAndUnnormalizedRouting() throws Exception {
        HfFolder f = HfFolder.of(model("qwen2moe", true, List.of("blk.0.attn_q.bias:64", "blk.0.attn_k.bias:32", "blk.0.attn_v.bias:32",
                "blk.0.ffn_gate_inp.weight:64,4", "blk.0.ffn_gate_exps.weight:64,32,4", "blk.0.ffn_up_exps.weight:64,32,4",
                "blk.0.ffn_down_exps.weight:32,64,4", "blk.0.ffn_gate_inp_shexp.weight:64,1", "blk.0.ffn_gate_shexp.weight:64,96",
                "blk.0.ffn_up_shexp.weight:64,96", "blk.0.ffn_down_shexp.weight:96,64"), List.of(
                kv("qwen2moe.expert_count", GgufValueType.UINT32, 4), kv("qwen2moe.expert_used_count", GgufValueType.UINT32, 2),
                kv("qwen2moe.expert_feed_forward_length", GgufValueType.UINT32, 32),
                kv("qwen2moe.expert_shared_feed_forward_length", GgufValueType.UINT32, 96))));
        Map<String, HfTensor> t = byName(f);
        assertArrayEquals(new long[] {1, 64}, t.get("model.layers.0.mlp.shared_expert_gate.weight").shape());
        assertArrayEquals(new long[] {64, 96}, t.get("model.layers.0.mlp.shared_expert.down_proj.weight").shape());
        assertArrayEquals(new long[] {32, 64}, t.get("model.layers.0.mlp.experts.1.up_proj.weight").shape());
        JsonNode c = JSON.readTree(f.config());
        assertEquals("Qwen2MoeForCausalLM", c.get("architectures").get(0).asText());
        assertEquals(96, c.get("shared_expert_intermediate_size").asInt());
        assertEquals(32, c.get("moe_intermediate_size").asInt());
        assertFalse(c.get("norm_topk_prob").asBoolean());
        assertTrue(c.get("qkv_bias").asBoolean());
    }

    @Test
    void phi3KeepsFusedProjectionsUnpermuted() throws Exception {
        HfFolder f = HfFolder.of(model("phi3", false, List.of("blk.0.ffn_up.weight:64,256:Q8_0", "blk.0.ffn_down.weight:128,64"),
                List.of(kv("phi3.rope.dimension_count", GgufValueType.UINT32, 8),
                        kv("phi3.rope.scaling.original_context_length", GgufValueType.UINT32, 4096),
                        kv("phi3.attention.sliding_window", GgufValueType.UINT32, 0))));
        Map<String, HfTensor> t = byName(f);
        assertEquals(9, t.size());
        HfTensor qkv = t.get("model.layers.0.self_attn.qkv_proj.weight");
        assertArrayEquals(new long[] {128, 64}, qkv.shape());
        assertNull(qkv.sourceRow(), "phi3 rows are not permuted");
        assertArrayEquals(new long[] {256, 64}, t.get("model.layers.0.mlp.gate_up_proj.weight").shape());
        assertTrue(t.containsKey("model.layers.0.mlp.down_proj.weight"));
        JsonNode c = JSON.readTree(f.config());
        assertEquals("Phi3ForCausalLM", c.get("architectures").get(0).asText());
        assertEquals("phi3", c.get("model_type").asText());
        assertEquals(16, c.get("head_dim").asInt(), "head_dim is hidden / heads, not the rope dimensions");
        assertEquals(0.5, c.get("partial_rotary_factor").asDouble());
        assertEquals(4096, c.get("original_max_position_embeddings").asInt());
        assertTrue(c.get("sliding_window").isNull(), "llama.cpp's 0 is no sliding window");
        HfUnsupported scaled = assertThrows(HfUnsupported.class, () -> HfFolder.of(model("phi3", false, List.of(), List.of(
                kv("phi3.rope.scaling.type", GgufValueType.STRING, "yarn"), kv("phi3.rope.scaling.factor", GgufValueType.FLOAT32, 4f)))));
        assertTrue(scaled.getMessage().contains("rope scaling"), scaled.getMessage());
    }

    /** Phi-3 LongRoPE: the factors are the rope_factors tensors' values; attention_factor only when not transformers' default. */
    @Test
    void phi3LongRopeFactorsComeFromTheirTensors() throws Exception {
        List<String> factors = List.of("rope_factors_long.weight:4", "rope_factors_short.weight:4");
        float attn = (float) Math.sqrt(1 + Math.log(4) / Math.log(128));   // context 512 over original 128
        List<GgufKv> kvs = new ArrayList<>(List.of(kv("phi3.rope.dimension_count", GgufValueType.UINT32, 8),
                kv("phi3.rope.scaling.original_context_length", GgufValueType.UINT32, 128),
                kv("phi3.rope.scaling.attn_factor", GgufValueType.FLOAT32, attn)));
        Map<String, float[]> values = Map.of("rope_factors_long.weight", new float[] {1f, 2.5f, 4f, 0.1f},
                "rope_factors_short.weight", new float[] {1f, 1f, 1.25f, 1.5f});
        HfFolder f = HfFolder.of(model("phi3", false, factors, kvs), values);
        JsonNode r = JSON.readTree(f.config()).get("rope_scaling");
        assertEquals("longrope", r.get("rope_type").asText());
        assertEquals(List.of(1.0, 2.5, 4.0, 0.1), JSON.convertValue(r.get("long_factor"), List.class));
        assertEquals(List.of(1.0, 1.0, 1.25, 1.5), JSON.convertValue(r.get("short_factor"), List.class));
        assertFalse(r.has("attention_factor"), "the default is transformers' own");
        assertEquals(128, JSON.readTree(f.config()).get("original_max_position_embeddings").asInt());
        assertFalse(byName(f).containsKey("rope_factors_long.weight"));
        assertEquals(7, f.tensors().size(), "the factors are no HF tensors");
        kvs.set(2, kv("phi3.rope.scaling.attn_factor", GgufValueType.FLOAT32, 1f));
        assertEquals(1.0, JSON.readTree(HfFolder.of(model("phi3", false, factors, kvs), values).config())
                .get("rope_scaling").get("attention_factor").asDouble());
        HfUnsupported unread = assertThrows(HfUnsupported.class, () -> HfFolder.of(model("phi3", false, factors, kvs)));
        assertTrue(unread.getMessage().contains("rope_factors_long/short"), unread.getMessage());
        HfUnsupported wrong = assertThrows(HfUnsupported.class, () -> HfFolder.of(model("phi3", false, factors, kvs),
                Map.of("rope_factors_long.weight", new float[3], "rope_factors_short.weight", new float[3])));
        assertTrue(wrong.getMessage().contains("4 values"), wrong.getMessage());
        HfUnsupported one = assertThrows(HfUnsupported.class, () -> HfFolder.of(model("phi3", false,
                List.of("rope_factors_long.weight:4"), kvs), values));
        assertTrue(one.getMessage().contains("only one"), one.getMessage());
    }

    @Test
    void gemma3NormsAreShiftedBackAndConfigIsGemmas() throws Exception {
        List<String> gemma = List.of("blk.0.post_attention_norm.weight:64", "blk.0.post_ffw_norm.weight:64",
                "blk.0.attn_q_norm.weight:16", "blk.0.attn_k_norm.weight:16", "blk.0.ffn_gate.weight:64,128",
                "blk.0.ffn_up.weight:64,128", "blk.0.ffn_down.weight:128,64:Q8_0");
        List<GgufKv> kvs = new ArrayList<>(List.of(kv("gemma3.attention.key_length", GgufValueType.UINT32, 16),
                kv("gemma3.attention.sliding_window", GgufValueType.UINT32, 512),
                kv("gemma3.rope.freq_base", GgufValueType.FLOAT32, 1e6f),
                kv("gemma3.rope.freq_base_swa", GgufValueType.FLOAT32, 1e4f)));
        HfFolder f = HfFolder.of(model("gemma3", true, gemma, kvs));
        Map<String, HfTensor> t = byName(f);
        for (String norm : List.of("model.norm.weight", "model.layers.0.input_layernorm.weight",
                "model.layers.0.post_attention_layernorm.weight", "model.layers.0.pre_feedforward_layernorm.weight",
                "model.layers.0.post_feedforward_layernorm.weight", "model.layers.0.self_attn.q_norm.weight")) {
            assertEquals(-1f, t.get(norm).add(), norm);
        }
        assertEquals(0f, t.get("model.layers.0.mlp.down_proj.weight").add());
        assertEquals(0f, t.get("model.embed_tokens.weight").add(), "embeddings are not pre-scaled in the file");
        assertFalse(t.containsKey("lm_head.weight"));
        JsonNode c = JSON.readTree(f.config());
        assertEquals("Gemma3ForCausalLM", c.get("architectures").get(0).asText());
        assertEquals("gemma3_text", c.get("model_type").asText());
        assertEquals(16, c.get("query_pre_attn_scalar").asInt(), "llama.cpp scales queries by 1/sqrt(head_dim)");
        assertEquals(512, c.get("sliding_window").asInt());
        assertEquals(10000.0, c.get("rope_local_base_freq").asDouble());
        assertEquals(1e6, c.get("rope_theta").asDouble());
        assertEquals("gelu_pytorch_tanh", c.get("hidden_activation").asText());
        assertFalse(c.has("hidden_act"));
        assertEquals("sliding_attention", c.get("layer_types").get(0).asText());
        JsonNode ollama = JSON.readTree(HfFolder.of(model("gemma3", true, gemma, List.of(
                kv("gemma3.rope.global.freq_base", GgufValueType.FLOAT32, 5e5f),
                kv("gemma3.rope.local.freq_base", GgufValueType.FLOAT32, 2e4f)))).config());
        assertEquals(5e5, ollama.get("rope_theta").asDouble(), "Ollama's key names");
        assertEquals(2e4, ollama.get("rope_local_base_freq").asDouble());
        assertTrue(ollama.get("sliding_window").isNull());
        assertEquals("full_attention", ollama.get("layer_types").get(0).asText());
        // a norm that is not F32 cannot be shifted back here
        HfUnsupported q = assertThrows(HfUnsupported.class, () -> HfFolder.of(model("gemma3", true,
                List.of("blk.0.post_attention_norm.weight:64:F16"), kvs)));
        assertTrue(q.getMessage().contains("post_attention_norm"), q.getMessage());
    }

    @Test
    void unsupportedModelsSayWhy() {
        HfUnsupported gemma = assertThrows(HfUnsupported.class, () -> HfFolder.of(model("gemma3n", false, List.of(), List.of())));
        assertTrue(gemma.getMessage().contains("gemma3n is not supported"), gemma.getMessage());
        HfUnsupported extra = assertThrows(HfUnsupported.class,
                () -> HfFolder.of(model("llama", false, List.of("blk.0.weird.weight:64"), List.of())));
        assertTrue(extra.getMessage().contains("blk.0.weird.weight"), extra.getMessage());
        HfUnsupported rope = assertThrows(HfUnsupported.class,
                () -> HfFolder.of(model("llama", false, List.of("rope_freqs.weight:8"), List.of())));
        assertTrue(rope.getMessage().contains("rope_freqs"), rope.getMessage());
    }

    @Test
    void llama3RopeScalingIsRecoveredFromRopeFreqs() throws Exception {
        List<GgufKv> kvs = List.of(kv("llama.rope.freq_base", GgufValueType.FLOAT32, 500000f));
        GgufFile g = model("llama", false, List.of("rope_freqs.weight:8"), kvs);
        float[] freqs = dev.modelfs.arch.RopeFreqs.llama3(new dev.modelfs.arch.ConfigKeys.RopeScaling("llama3", 32f,
                java.util.Optional.of(8192), 1f, 4f), 500000f, 16);
        JsonNode r = JSON.readTree(HfFolder.of(g, Map.of("rope_freqs.weight", freqs)).config()).get("rope_scaling");
        assertEquals("llama3", r.get("rope_type").asText());
        assertEquals(32.0, r.get("factor").asDouble());
        assertEquals(4.0, r.get("high_freq_factor").asDouble());
        assertEquals(8192, r.get("original_max_position_embeddings").asInt());
        assertFalse(byName(HfFolder.of(g, Map.of("rope_freqs.weight", freqs))).containsKey("rope_freqs.weight"));
        freqs[3] *= 1.01f;
        assertThrows(HfUnsupported.class, () -> HfFolder.of(g, Map.of("rope_freqs.weight", freqs)));
    }

    @Test
    void anUnknownPreTokenizerLeavesOnlyTheTokenizerFilesOut() {
        List<GgufKv> kvs = List.of(kv("tokenizer.ggml.pre", GgufValueType.STRING, "no-such-pre"));
        GgufFile g = model("llama", false, List.of(), List.of());
        List<GgufKv> changed = new ArrayList<>();
        for (GgufKv k : g.kvs()) {
            changed.add(k.key().equals("tokenizer.ggml.pre") ? kvs.getFirst() : k);
        }
        HfFolder f = HfFolder.of(new GgufFile(3, 32, changed, g.tensors(), 4096));
        assertNull(f.tokenizerJson());
        assertTrue(f.tokenizerProblem().contains("no-such-pre"), f.tokenizerProblem());
        assertEquals(9, f.tensors().size());
    }
}
