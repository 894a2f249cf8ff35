package dev.modelfs.hf;

import static dev.modelfs.hf.HfFolderTest.kv;
import static dev.modelfs.hf.HfFolderTest.strings;
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
import org.junit.jupiter.api.Test;

/**
 * The Hugging Face folders of gpt-oss and deepseek2 GGUFs laid out as llama.cpp's converter writes them:
 * tensor names and shapes as transformers' GptOssForCausalLM / DeepseekV3ForCausalLM name them (its
 * {@code save_pretrained}: fused, transposed experts for gpt-oss; per-expert ones and a whole kv_b_proj for
 * DeepSeek), the config.json fields, and a layer with only part of an assembly refused.
 */
class HfAssembliesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A GGUF of {@code arch} with the given KVs and tensors ({@code name:ne0,ne1,...[:TYPE]}), tokenizer as HfFolderTest's. */
    static GgufFile gguf(String arch, List<GgufKv> archKvs, List<String> names) {
        List<GgufKv> kvs = new ArrayList<>(List.of(kv("general.architecture", GgufValueType.STRING, arch),
                kv("tokenizer.ggml.model", GgufValueType.STRING, "gpt2"), kv("tokenizer.ggml.pre", GgufValueType.STRING, "qwen2"),
                strings("tokenizer.ggml.tokens", List.of("a", "b", "ab", "<|end|>")),
                kv("tokenizer.ggml.token_type", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(1, 1, 1, 3))),
                strings("tokenizer.ggml.merges", List.of("a b")), kv("tokenizer.ggml.eos_token_id", GgufValueType.UINT32, 3)));
        kvs.addAll(archKvs);
        List<GgufTensorInfo> tensors = new ArrayList<>();
        long off = 0;
        for (String n : names) {
            String[] p = n.split(":");
            long[] ne = java.util.Arrays.stream(p[1].split(",")).mapToLong(Long::parseLong).toArray();
            GgufTensorInfo t = new GgufTensorInfo(p[0], ne, p.length > 2 ? GgmlType.valueOf(p[2]) : GgmlType.F32, off);
            tensors.add(t);
            off += (t.byteSize() + 31) / 32 * 32;
        }
        return new GgufFile(3, 32, kvs, tensors, 4096);
    }

    static List<GgufKv> common(String p, int layers, int ff) {
        return List.of(kv(p + "embedding_length", GgufValueType.UINT32, 64), kv(p + "block_count", GgufValueType.UINT32, layers),
                kv(p + "feed_forward_length", GgufValueType.UINT32, ff), kv(p + "attention.head_count", GgufValueType.UINT32, 4),
                kv(p + "attention.layer_norm_rms_epsilon", GgufValueType.FLOAT32, 1e-5f), kv(p + "context_length", GgufValueType.UINT32, 512));
    }

    /** gpt-oss: hidden 64, 4 heads of 16 (2 kv heads), 4 experts of ff 32, one layer. */
    static List<String> gptOssTensors(boolean withUp) {
        List<String> t = new ArrayList<>(List.of("token_embd.weight:64,4", "output_norm.weight:64", "output.weight:64,4",
                "blk.0.attn_norm.weight:64", "blk.0.post_attention_norm.weight:64", "blk.0.attn_sinks.weight:4",
                "blk.0.attn_q.weight:64,64", "blk.0.attn_q.bias:64", "blk.0.attn_k.weight:64,32", "blk.0.attn_k.bias:32",
                "blk.0.attn_v.weight:64,32", "blk.0.attn_v.bias:32", "blk.0.attn_output.weight:64,64", "blk.0.attn_output.bias:64",
                "blk.0.ffn_gate_inp.weight:64,4", "blk.0.ffn_gate_inp.bias:4",
                "blk.0.ffn_gate_exps.weight:64,32,4:MXFP4", "blk.0.ffn_gate_exps.bias:32,4",
                "blk.0.ffn_down_exps.weight:32,64,4:MXFP4", "blk.0.ffn_down_exps.bias:64,4"));
        if (withUp) {
            t.addAll(List.of("blk.0.ffn_up_exps.weight:64,32,4:MXFP4", "blk.0.ffn_up_exps.bias:32,4"));
        }
        return t;
    }

    static List<GgufKv> gptOssKvs() {
        String p = "gpt-oss.";
        List<GgufKv> kvs = new ArrayList<>(common(p, 1, 32));
        kvs.addAll(List.of(kv(p + "attention.head_count_kv", GgufValueType.UINT32, 2), kv(p + "attention.key_length", GgufValueType.UINT32, 16),
                kv(p + "expert_count", GgufValueType.UINT32, 4), kv(p + "expert_used_count", GgufValueType.UINT32, 2),
                kv(p + "expert_feed_forward_length", GgufValueType.UINT32, 32), kv(p + "attention.sliding_window", GgufValueType.UINT32, 8),
                kv(p + "rope.freq_base", GgufValueType.FLOAT32, 150000f), kv(p + "rope.scaling.type", GgufValueType.STRING, "yarn"),
                kv(p + "rope.scaling.factor", GgufValueType.FLOAT32, 32f),
                kv(p + "rope.scaling.original_context_length", GgufValueType.UINT32, 4096)));
        return kvs;
    }

    @Test
    void gptOssExpertsAreFusedAndTransposedAsTransformersNamesThem() throws Exception {
        HfFolder f = HfFolder.of(gguf("gpt-oss", gptOssKvs(), gptOssTensors(true)));
        Map<String, HfTensor> t = HfFolderTest.byName(f);
        assertArrayEquals(new long[] {4}, t.get("model.layers.0.self_attn.sinks").shape());
        assertNull(t.get("model.layers.0.self_attn.sinks").assembled());             // a rename: bytes as stored
        assertArrayEquals(new long[] {4, 64, 64}, t.get("model.layers.0.mlp.experts.gate_up_proj").shape());
        HfTensor.Assembled gateUp = t.get("model.layers.0.mlp.experts.gate_up_proj").assembled();
        assertNotNull(gateUp);
        assertEquals(4, gateUp.batches());
        assertEquals(List.of("blk.0.ffn_gate_exps.weight", "blk.0.ffn_up_exps.weight"),
                gateUp.parts().getFirst().sources().stream().map(GgufTensorInfo::name).toList());
        assertTrue(gateUp.parts().getFirst().transposed());
        assertArrayEquals(new long[] {4, 64}, t.get("model.layers.0.mlp.experts.gate_up_proj_bias").shape());
        assertArrayEquals(new long[] {4, 32, 64}, t.get("model.layers.0.mlp.experts.down_proj").shape());
        assertArrayEquals(new long[] {4, 64}, t.get("model.layers.0.mlp.experts.down_proj_bias").shape());
        assertArrayEquals(new long[] {4, 64}, t.get("model.layers.0.mlp.router.weight").shape());
        assertTrue(t.containsKey("model.layers.0.mlp.router.bias"));
        assertTrue(t.containsKey("model.layers.0.post_attention_layernorm.weight"));
        assertEquals(20, t.size());          // 22 GGUF tensors, each used once: gate and up fused twice
        JsonNode c = JSON.readTree(f.config());
        assertEquals("GptOssForCausalLM", c.get("architectures").get(0).asText());
        assertEquals(4, c.get("num_local_experts").asInt());
        assertEquals(2, c.get("num_experts_per_tok").asInt());
        assertEquals(8, c.get("sliding_window").asInt());
        assertEquals("sliding_attention", c.get("layer_types").get(0).asText());
        assertEquals("yarn", c.get("rope_scaling").get("rope_type").asText());
        assertFalse(c.get("rope_scaling").get("truncate").asBoolean());
        assertTrue(c.get("attention_bias").asBoolean());
        assertEquals(16, c.get("head_dim").asInt());
    }

    /**
     * Gemma 4 (26B-A4B) with its gate and up experts apart (older Ollama files, from a moe.* checkpoint): transformers'
     * {@code experts.gate_up_proj} [E, 2·ff, hidden] gathered expert by expert, the gate rows then the up rows; a layer with
     * the fused tensor keeps it as stored; without {@code ffn_down_exps.scale} no assembly gives {@code router.per_expert_scale}
     * (the folder adds it as ones: {@code Gemma4.hfConstants}).
     */
    @Test
    void gemma4SeparateGateUpExpertsAreFusedExpertByExpert() {
        List<String> layer0 = List.of("blk.0.ffn_gate_exps.weight:64,32,4:F16", "blk.0.ffn_up_exps.weight:64,32,4:F16",
                "blk.0.ffn_down_exps.weight:32,64,4:F16", "blk.0.ffn_gate_inp.scale:64");
        List<String> layer1 = List.of("blk.1.ffn_gate_up_exps.weight:64,64,4:F16", "blk.1.ffn_down_exps.weight:32,64,4:F16",
                "blk.1.ffn_gate_inp.scale:64", "blk.1.ffn_down_exps.scale:4");
        List<String> names = new ArrayList<>(layer0);
        names.addAll(layer1);
        HfAssemblies.Result r = HfAssemblies.of(gguf("gemma4", List.of(), names), dev.modelfs.arch.Architecture.GEMMA4);
        Map<String, HfTensor> t = new java.util.HashMap<>();
        r.tensors().forEach(x -> t.put(x.name(), x));
        HfTensor split = t.get("model.layers.0.experts.gate_up_proj");
        assertArrayEquals(new long[] {4, 64, 64}, split.shape());
        HfTensor.Assembled a = split.assembled();
        assertEquals(4, a.batches());
        assertEquals(List.of("blk.0.ffn_gate_exps.weight", "blk.0.ffn_up_exps.weight"),
                a.parts().stream().map(p -> p.sources().getFirst().name()).toList());
        assertTrue(a.parts().stream().allMatch(p -> p.sources().size() == 1 && !p.transposed()));
        HfTensor fused = t.get("model.layers.1.experts.gate_up_proj");
        assertArrayEquals(new long[] {4, 64, 64}, fused.shape());
        assertNull(fused.assembled(), "the fused tensor is a rename: bytes as stored");
        assertEquals("blk.1.ffn_gate_up_exps.weight", fused.source().name());
        assertArrayEquals(new long[] {4}, t.get("model.layers.1.router.per_expert_scale").shape());
        assertFalse(t.containsKey("model.layers.0.router.per_expert_scale"), "no scale stored: no assembly (ones: hfConstants)");
        assertEquals(7, t.size());
        assertTrue(r.consumed().containsAll(List.of("blk.0.ffn_gate_exps.weight", "blk.0.ffn_up_exps.weight", "blk.1.ffn_gate_up_exps.weight")));
        var e = assertThrows(HfUnsupported.class, () -> HfAssemblies.of(gguf("gemma4", List.of(), List.of(layer0.getFirst(), layer0.get(2))),
                dev.modelfs.arch.Architecture.GEMMA4));
        assertTrue(e.getMessage().contains("only some of blk.0.ffn_gate_exps.weight, blk.0.ffn_up_exps.weight"), e.getMessage());
    }

    @Test
    void aLayerWithPartOfAnAssemblyIsRefused() {
        var e = assertThrows(HfUnsupported.class, () -> HfFolder.of(gguf("gpt-oss", gptOssKvs(), gptOssTensors(false))));
        assertTrue(e.getMessage().contains("only some of"), e.getMessage());
    }

    /** deepseek2: hidden 64, 4 heads, q_lora 64, kv_lora 64, nope 32, rope 16, v 32; layer 0 dense, layer 1 with 8 experts. */
    static List<String> deepseekTensors(String kvB) {
        List<String> t = new ArrayList<>(List.of("token_embd.weight:64,4", "output_norm.weight:64", "output.weight:64,4"));
        for (int i = 0; i < 2; i++) {
            String b = "blk." + i + ".";
            t.addAll(List.of(b + "attn_norm.weight:64", b + "attn_q_a.weight:64,64", b + "attn_q_a_norm.weight:64",
                    b + "attn_q_b.weight:64,192", b + "attn_kv_a_mqa.weight:64,80", b + "attn_kv_a_norm.weight:64",
                    b + "attn_output.weight:128,64", b + "ffn_norm.weight:64"));
            t.addAll(kvB.equals("split") ? List.of(b + "attn_k_b.weight:32,64,4", b + "attn_v_b.weight:64,32,4")
                    : List.of(b + "attn_kv_b.weight:64,256"));
        }
        t.addAll(List.of("blk.0.ffn_gate.weight:64,128", "blk.0.ffn_up.weight:64,128", "blk.0.ffn_down.weight:128,64",
                "blk.1.ffn_gate_inp.weight:64,8", "blk.1.exp_probs_b.bias:8", "blk.1.ffn_gate_exps.weight:64,32,8",
                "blk.1.ffn_up_exps.weight:64,32,8", "blk.1.ffn_down_exps.weight:32,64,8", "blk.1.ffn_gate_shexp.weight:64,32",
                "blk.1.ffn_up_shexp.weight:64,32", "blk.1.ffn_down_shexp.weight:32,64"));
        return t;
    }

    static List<GgufKv> deepseekKvs(boolean sigmoid) {
        String p = "deepseek2.";
        List<GgufKv> kvs = new ArrayList<>(common(p, 2, 128));
        kvs.addAll(List.of(kv(p + "attention.head_count_kv", GgufValueType.UINT32, 1), kv(p + "attention.key_length", GgufValueType.UINT32, 80),
                kv(p + "attention.value_length", GgufValueType.UINT32, 64), kv(p + "attention.key_length_mla", GgufValueType.UINT32, 48),
                kv(p + "attention.value_length_mla", GgufValueType.UINT32, 32), kv(p + "attention.q_lora_rank", GgufValueType.UINT32, 64),
                kv(p + "attention.kv_lora_rank", GgufValueType.UINT32, 64), kv(p + "rope.dimension_count", GgufValueType.UINT32, 16),
                kv(p + "expert_count", GgufValueType.UINT32, 8), kv(p + "expert_used_count", GgufValueType.UINT32, 2),
                kv(p + "expert_group_count", GgufValueType.UINT32, 4), kv(p + "expert_group_used_count", GgufValueType.UINT32, 2),
                kv(p + "leading_dense_block_count", GgufValueType.UINT32, 1), kv(p + "expert_feed_forward_length", GgufValueType.UINT32, 32),
                kv(p + "expert_shared_count", GgufValueType.UINT32, 1), kv(p + "expert_weights_scale", GgufValueType.FLOAT32, 2.5f),
                kv(p + "expert_weights_norm", GgufValueType.BOOL, true)));
        if (sigmoid) {
            kvs.add(kv(p + "expert_gating_func", GgufValueType.UINT32, 2));
        }
        return kvs;
    }

    @Test
    void deepseekKvBIsRejoinedAndExpertsArePerExpert() throws Exception {
        HfFolder f = HfFolder.of(gguf("deepseek2", deepseekKvs(true), deepseekTensors("split")));
        Map<String, HfTensor> t = HfFolderTest.byName(f);
        for (int i = 0; i < 2; i++) {
            HfTensor kvB = t.get("model.layers." + i + ".self_attn.kv_b_proj.weight");
            assertArrayEquals(new long[] {4 * (32 + 32), 64}, kvB.shape());
            assertEquals(2, kvB.assembled().parts().size());
        }
        assertArrayEquals(new long[] {8}, t.get("model.layers.1.mlp.gate.e_score_correction_bias").shape());
        assertArrayEquals(new long[] {32, 64}, t.get("model.layers.1.mlp.experts.7.gate_proj.weight").shape());
        assertTrue(t.containsKey("model.layers.0.mlp.down_proj.weight"));
        assertTrue(t.containsKey("model.layers.1.mlp.shared_experts.up_proj.weight"));
        assertFalse(t.containsKey("model.layers.0.mlp.gate.e_score_correction_bias"));   // a dense layer has none
        JsonNode c = JSON.readTree(f.config());
        assertEquals("DeepseekV3ForCausalLM", c.get("architectures").get(0).asText());
        for (var want : Map.of("q_lora_rank", 64, "kv_lora_rank", 64, "qk_nope_head_dim", 32, "qk_rope_head_dim", 16, "v_head_dim", 32,
                "n_routed_experts", 8, "n_group", 4, "topk_group", 2, "first_k_dense_replace", 1, "num_key_value_heads", 4).entrySet()) {
            assertEquals(want.getValue(), c.get(want.getKey()).asInt(), want.getKey());
        }
        assertEquals(2.5, c.get("routed_scaling_factor").asDouble());
        assertEquals(32, c.get("moe_intermediate_size").asInt());
        assertEquals(1, c.get("n_shared_experts").asInt());
        assertTrue(c.get("norm_topk_prob").asBoolean());
        // an older GGUF with attn_kv_b: the same HF name, the tensor as stored
        HfFolder old = HfFolder.of(gguf("deepseek2", deepseekKvs(true), deepseekTensors("joined")));
        HfTensor kvB = HfFolderTest.byName(old).get("model.layers.1.self_attn.kv_b_proj.weight");
        assertArrayEquals(new long[] {256, 64}, kvB.shape());
        assertNull(kvB.assembled());
    }

    @Test
    void deepseekWithSoftmaxRoutingIsRefused() {
        var e = assertThrows(HfUnsupported.class, () -> HfFolder.of(gguf("deepseek2", deepseekKvs(false), deepseekTensors("split"))));
        assertTrue(e.getMessage().contains("sigmoid"), e.getMessage());
    }
}
