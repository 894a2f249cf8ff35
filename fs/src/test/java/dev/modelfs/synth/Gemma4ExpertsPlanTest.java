package dev.modelfs.synth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.model.BlobRange;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.store.Digest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The synthesized GGUF of a Gemma 4 with experts (26B-A4B; docs/FORMATS.md §7.5, {@code Gemma4Experts}): the routed block
 * beside the dense MLP as llama.cpp's converter writes it (router and its scales, fused {@code ffn_gate_up_exps}, the three
 * norms, the expert KVs) from the stacked tensors Ollama's {@code x/create} stores, and what is refused.
 */
class Gemma4ExpertsPlanTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Digest BLOB = new Digest("b".repeat(64));

    private static LogicalTensor bf16(String name, long... shape) {
        long n = Arrays.stream(shape).reduce(1, (a, b) -> a * b);
        StoredTensor s = new StoredTensor(name, Dtype.BF16, shape, new BlobRange(BLOB, 1L << 40, 0, n * 2));
        return new LogicalTensor(name, "", name, s, null, null, null, null, shape);
    }

    private static ObjectNode config() throws Exception {
        return (ObjectNode) JSON.readTree("""
                {"architectures":["Gemma4ForCausalLM"],"model_type":"gemma4_text","hidden_size":64,"intermediate_size":128,
                 "num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,
                 "per_layer_config":{"1":{"head_dim":32}},"rms_norm_eps":1e-6,"max_position_embeddings":256,"vocab_size":6,
                 "sliding_window":8,"layer_types":["sliding_attention","full_attention"],"final_logit_softcapping":30.0,
                 "hidden_activation":"gelu_pytorch_tanh","hidden_size_per_layer_input":0,"num_kv_shared_layers":0,
                 "attention_k_eq_v":false,"enable_moe_block":false,"use_double_wide_mlp":false,"tie_word_embeddings":true,
                 "rope_parameters":{"full_attention":{"rope_type":"proportional","partial_rotary_factor":0.25,"rope_theta":1000000.0},
                                    "sliding_attention":{"rope_type":"default","rope_theta":10000.0}}}""");
    }

    /** A Gemma-style byte-fallback BPE: specials 0-2 in the vocabulary, a byte token, a visible tool-call marker added. */
    private static JsonNode tokenizer() throws Exception {
        return JSON.readTree("""
                {"model":{"type":"BPE","byte_fallback":true,"vocab":{"<pad>":0,"<eos>":1,"<bos>":2,"<0x0A>":3,"▁a":4},
                          "merges":[["▁","a"]]},
                 "decoder":{"type":"Sequence","decoders":[]},
                 "added_tokens":[{"id":0,"content":"<pad>","special":true},{"id":1,"content":"<eos>","special":true},
                                 {"id":2,"content":"<bos>","special":true},{"id":5,"content":"<|tool_call>","special":true}]}""");
    }

    private static JsonNode tokenizerConfig() throws Exception {
        return JSON.readTree("""
                {"bos_token":"<bos>","eos_token":"<eos>","pad_token":"<pad>","add_bos_token":true,"add_eos_token":false}""");
    }

    private static List<LogicalTensor> tensors() {
        List<LogicalTensor> out = new ArrayList<>(List.of(bf16("model.embed_tokens.weight", 6, 64), bf16("model.norm.weight", 64)));
        for (int l = 0; l < 2; l++) {
            String p = "model.layers." + l + ".";
            long hd = l == 0 ? 16 : 32;
            for (String n : List.of("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm")) {
                out.add(bf16(p + n + ".weight", 64));
            }
            out.add(bf16(p + "layer_scalar", 1));
            out.add(bf16(p + "self_attn.q_proj.weight", 4 * hd, 64));
            out.add(bf16(p + "self_attn.k_proj.weight", 2 * hd, 64));
            out.add(bf16(p + "self_attn.v_proj.weight", 2 * hd, 64));
            out.add(bf16(p + "self_attn.o_proj.weight", 64, 4 * hd));
            out.add(bf16(p + "self_attn.q_norm.weight", hd));
            out.add(bf16(p + "self_attn.k_norm.weight", hd));
            out.add(bf16(p + "mlp.gate_proj.weight", 128, 64));
            out.add(bf16(p + "mlp.up_proj.weight", 128, 64));
            out.add(bf16(p + "mlp.down_proj.weight", 64, 128));
        }
        return out;
    }

    private static SynthesizedGgufPlanner.Result plan(List<LogicalTensor> t, JsonNode cfg) throws Exception {
        return SynthesizedGgufPlanner.plan("", t, new SynthesizedGgufPlanner.Inputs("gemma4-tiny", cfg, tokenizer(), tokenizerConfig(), null),
                x -> true);
    }

    private static ObjectNode moeConfig() throws Exception {
        return config().put("enable_moe_block", true).put("num_experts", 4).put("top_k_experts", 2).put("moe_intermediate_size", 32);
    }

    private static List<LogicalTensor> moeTensors() {
        List<LogicalTensor> out = new ArrayList<>(tensors());
        for (int l = 0; l < 2; l++) {
            String p = "model.layers." + l + ".";
            out.add(bf16(p + "router.proj.weight", 4, 64));
            out.add(bf16(p + "router.scale", 64));
            out.add(bf16(p + "router.per_expert_scale", 4));
            out.add(bf16(p + "experts.gate_up_proj", 4, 64, 64));
            out.add(bf16(p + "experts.down_proj", 4, 64, 32));
            for (String n : List.of("pre_feedforward_layernorm_2", "post_feedforward_layernorm_1", "post_feedforward_layernorm_2")) {
                out.add(bf16(p + n + ".weight", 64));
            }
        }
        return out;
    }

    @Test
    void plansTheRoutedBlockBesideTheDenseMlp() throws Exception {
        var p = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, plan(moeTensors(), moeConfig())).plan();
        Map<String, SynthesizedGgufPlanner.TensorPlan> t = p.tensors().stream()
                .collect(Collectors.toMap(SynthesizedGgufPlanner.TensorPlan::ggufName, Function.identity()));
        assertEquals(List.of(64L, 64L, 4L), Arrays.stream(t.get("blk.1.ffn_gate_up_exps.weight").ne()).boxed().toList());
        assertEquals(GgmlType.BF16, t.get("blk.1.ffn_gate_up_exps.weight").type());
        assertEquals("model.layers.1.experts.gate_up_proj", t.get("blk.1.ffn_gate_up_exps.weight").source().name());
        assertEquals(List.of(32L, 64L, 4L), Arrays.stream(t.get("blk.0.ffn_down_exps.weight").ne()).boxed().toList());
        assertEquals(List.of(64L, 4L), Arrays.stream(t.get("blk.0.ffn_gate_inp.weight").ne()).boxed().toList());
        assertEquals(GgmlType.F32, t.get("blk.0.ffn_gate_inp.weight").type(), "the router stays F32, as the converter keeps it");
        assertEquals(GgmlType.F32, t.get("blk.0.ffn_gate_inp.scale").type());
        assertEquals("model.layers.0.router.per_expert_scale", t.get("blk.0.ffn_down_exps.scale").source().name());
        assertEquals(List.of(4L), Arrays.stream(t.get("blk.0.ffn_down_exps.scale").ne()).boxed().toList());
        assertTrue(t.containsKey("blk.1.pre_ffw_norm_2.weight") && t.containsKey("blk.1.post_ffw_norm_1.weight")
                && t.containsKey("blk.1.post_ffw_norm_2.weight") && t.containsKey("blk.1.ffn_gate.weight"));
        assertEquals(moeTensors().size() + 1, p.tensors().size(), "every tensor once, and rope_freqs");
        Map<String, GgufKv> kv = p.kvs().stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals(p.kvs().size(), kv.size(), "no key twice");
        assertEquals(4, kv.get("gemma4.expert_count").value());
        assertEquals(2, kv.get("gemma4.expert_used_count").value());
        assertEquals(32, kv.get("gemma4.expert_feed_forward_length").value());
        assertEquals(128, kv.get("gemma4.feed_forward_length").value(), "the dense MLP's");
        var dense = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, plan(tensors(), config())).plan();
        assertFalse(dense.kvs().stream().anyMatch(k -> k.key().contains("expert")));
    }

    @Test
    void aMissingOrMisshapenExpertTensorIsRefused() throws Exception {
        List<LogicalTensor> missing = new ArrayList<>(moeTensors());
        missing.removeIf(x -> x.name().equals("model.layers.1.router.per_expert_scale"));
        assertTrue(reason(plan(missing, moeConfig())).contains("blk.1.ffn_down_exps.scale"), reason(plan(missing, moeConfig())));
        List<LogicalTensor> shape = new ArrayList<>(moeTensors());
        shape.replaceAll(x -> x.name().equals("model.layers.0.experts.gate_up_proj") ? bf16(x.name(), 4, 32, 64) : x);
        assertTrue(reason(plan(shape, moeConfig())).contains("config.json implies"));
        assertTrue(reason(plan(moeTensors(), config())).contains("unexpected tensor"), "experts in a dense config");
        assertTrue(reason(plan(tensors(), moeConfig())).contains("missing"), "a config with experts and no expert tensors");
        assertTrue(reason(plan(moeTensors(), moeConfig().put("top_k_experts", 8))).contains("top_k_experts"));
    }

    private static String reason(SynthesizedGgufPlanner.Result r) {
        return assertInstanceOf(SynthesizedGgufPlanner.Result.Refused.class, r).reason();
    }
}
