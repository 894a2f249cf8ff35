package dev.modelfs.synth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.arch.TensorRewrite;
import dev.modelfs.arch.TokenizerTables;
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
 * The synthesized GGUF of a Qwen 3.5 text model (also the text of {@code Qwen3_5ForConditionalGeneration}) (docs/FORMATS.md §7.5), planned from a two-layer model (a gated delta-net
 * layer with 2 K heads and 4 V heads of 32, a gated full-attention layer) against what llama.cpp's converter
 * ({@code Qwen3_5TextModel}, {@code --no-mtp}) writes: which tensors each layer type has, their GGUF names and shapes
 * ({@code ssm_a} without suffix, {@code dt_bias} as {@code ssm_dt.bias}, the conv kernel squeezed), the V-head orders,
 * {@code -exp}, which norms are {@code 1 + w}, the KVs; the MTP head left out; and what it refuses. The V-head order is
 * checked against the converter's {@code _reorder_v_heads} written out by hand for these sizes.
 */
class Qwen35SynthPlanTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Digest BLOB = new Digest("c".repeat(64));

    private static LogicalTensor bf16(String name, long... shape) {
        long n = Arrays.stream(shape).reduce(1, (a, b) -> a * b);
        StoredTensor s = new StoredTensor(name, Dtype.BF16, shape, new BlobRange(BLOB, 1L << 40, 0, n * 2));
        return new LogicalTensor(name, "", name, s, null, null, null, null, shape);
    }

    private static ObjectNode config() throws Exception {
        return (ObjectNode) JSON.readTree("""
                {"architectures":["Qwen3_5ForCausalLM"],"model_type":"qwen3_5_text","hidden_size":64,"intermediate_size":128,
                 "num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":32,"rms_norm_eps":1e-6,
                 "max_position_embeddings":512,"vocab_size":4,"tie_word_embeddings":false,"hidden_act":"silu",
                 "layer_types":["linear_attention","full_attention"],"linear_conv_kernel_dim":4,"linear_key_head_dim":32,
                 "linear_value_head_dim":32,"linear_num_key_heads":2,"linear_num_value_heads":4,
                 "rope_parameters":{"rope_type":"default","rope_theta":10000000.0,"partial_rotary_factor":0.25,
                                    "mrope_section":[2,1,1],"mrope_interleaved":true}}""");
    }

    private static JsonNode tokenizer() {
        ObjectNode t = JSON.createObjectNode();
        ObjectNode m = t.putObject("model").put("type", "BPE");
        m.putObject("vocab").put("a", 0).put("b", 1).put("ab", 2);
        m.putArray("merges").add("a b");
        t.set("pre_tokenizer", TokenizerTables.PreTokenizer.QWEN2.toHf());
        t.putArray("added_tokens").addObject().put("id", 3).put("content", "<|endoftext|>").put("special", true);
        return t;
    }

    private static List<LogicalTensor> tensors() {
        List<LogicalTensor> out = new ArrayList<>(List.of(bf16("model.embed_tokens.weight", 4, 64), bf16("model.norm.weight", 64),
                bf16("lm_head.weight", 4, 64)));
        String p = "model.layers.0.";
        out.addAll(List.of(bf16(p + "linear_attn.in_proj_qkv.weight", 256, 64), bf16(p + "linear_attn.in_proj_z.weight", 128, 64),
                bf16(p + "linear_attn.in_proj_a.weight", 4, 64), bf16(p + "linear_attn.in_proj_b.weight", 4, 64),
                bf16(p + "linear_attn.A_log", 4), bf16(p + "linear_attn.dt_bias", 4), bf16(p + "linear_attn.conv1d.weight", 256, 1, 4),
                bf16(p + "linear_attn.norm.weight", 32), bf16(p + "linear_attn.out_proj.weight", 64, 128)));
        p = "model.layers.1.";
        out.addAll(List.of(bf16(p + "self_attn.q_proj.weight", 256, 64), bf16(p + "self_attn.k_proj.weight", 64, 64),
                bf16(p + "self_attn.v_proj.weight", 64, 64), bf16(p + "self_attn.o_proj.weight", 64, 128),
                bf16(p + "self_attn.q_norm.weight", 32), bf16(p + "self_attn.k_norm.weight", 32)));
        for (int l = 0; l < 2; l++) {
            p = "model.layers." + l + ".";
            out.addAll(List.of(bf16(p + "input_layernorm.weight", 64), bf16(p + "post_attention_layernorm.weight", 64),
                    bf16(p + "mlp.gate_proj.weight", 128, 64), bf16(p + "mlp.up_proj.weight", 128, 64), bf16(p + "mlp.down_proj.weight", 64, 128)));
        }
        return out;
    }

    private static SynthesizedGgufPlanner.Result plan(List<LogicalTensor> t, JsonNode cfg) throws Exception {
        return SynthesizedGgufPlanner.plan("", t, new SynthesizedGgufPlanner.Inputs("qwen35-tiny", cfg, tokenizer(), null, null), x -> true);
    }

    private static SynthesizedGgufPlanner.Plan planOf(List<LogicalTensor> t, JsonNode cfg) throws Exception {
        var r = plan(t, cfg);
        if (r instanceof SynthesizedGgufPlanner.Result.Refused f) {
            throw new AssertionError("refused: " + f.reason());
        }
        return ((SynthesizedGgufPlanner.Result.Planned) r).plan();
    }

    private static Map<String, SynthesizedGgufPlanner.TensorPlan> planned(List<LogicalTensor> t, JsonNode cfg) throws Exception {
        var p = planOf(t, cfg);
        return p.tensors().stream().collect(Collectors.toMap(SynthesizedGgufPlanner.TensorPlan::ggufName, Function.identity()));
    }

    private static String reason(SynthesizedGgufPlanner.Result r) {
        return assertInstanceOf(SynthesizedGgufPlanner.Result.Refused.class, r).reason();
    }

    private static List<Long> ne(SynthesizedGgufPlanner.TensorPlan t) {
        return Arrays.stream(t.ne()).boxed().toList();
    }

    /** {@code _reorder_v_heads(x, 0, 2, 2, size)} for 4 heads of {@code size}: output head t is source head (t % 2) * 2 + t / 2. */
    private static long grouped(long i, long size) {
        long[] head = {0, 2, 1, 3};
        return head[(int) (i / size)] * size + i % size;
    }

    @Test
    void plansTheGatedDeltaNetAsTheConverterWritesIt() throws Exception {
        Map<String, SynthesizedGgufPlanner.TensorPlan> t = planned(tensors(), config());
        assertEquals(28, t.size(), "3 globals, 14 in the delta-net layer, 11 in the attention layer (as the converter writes)");
        assertFalse(t.containsKey("blk.0.attn_q.weight"));
        assertFalse(t.containsKey("blk.1.attn_qkv.weight"));

        var a = t.get("blk.0.ssm_a");
        assertEquals(GgmlType.F32, a.type());
        assertEquals(SynthesizedGgufPlanner.Choice.NEG_EXP_F32, a.choice());
        assertEquals(TensorRewrite.Function.NEG_EXP, a.rewrite().function());
        assertEquals(List.of(4L), ne(a));
        var dt = t.get("blk.0.ssm_dt.bias");
        assertEquals("model.layers.0.linear_attn.dt_bias", dt.source().name());
        assertNull(dt.rewrite().function());
        for (var v : List.of(a, dt, t.get("blk.0.ssm_alpha.weight"), t.get("blk.0.ssm_beta.weight"))) {
            for (long i = 0; i < 4; i++) {
                assertEquals(grouped(i, 1), v.rewrite().rows().sourceOf(i), v.ggufName() + " " + i);
            }
        }
        var qkv = t.get("blk.0.attn_qkv.weight");
        assertEquals(List.of(64L, 256L), ne(qkv));
        assertEquals(GgmlType.BF16, qkv.type());
        for (long i = 0; i < 256; i++) {   // q and k rows in place, then the V rows by head of 32
            assertEquals(i < 128 ? i : 128 + grouped(i - 128, 32), qkv.rewrite().rows().sourceOf(i), "attn_qkv row " + i);
        }
        var gate = t.get("blk.0.attn_gate.weight");
        for (long i = 0; i < 128; i++) {
            assertEquals(grouped(i, 32), gate.rewrite().rows().sourceOf(i));
        }
        var conv = t.get("blk.0.ssm_conv1d.weight");
        assertEquals(List.of(4L, 256L), ne(conv), "[channels, 1, kernel] squeezed");
        assertEquals(GgmlType.F32, conv.type(), "the converter keeps the conv kernel F32");
        assertEquals(128 + grouped(40, 32), conv.rewrite().rows().sourceOf(128 + 40));
        var out = t.get("blk.0.ssm_out.weight");
        assertNull(out.rewrite().rows());
        assertArrayEquals(new int[] {0, 2, 1, 3}, out.rewrite().columns().blockOrder(), "ssm_out's column blocks, one per V head");

        assertEquals(SynthesizedGgufPlanner.Choice.WIDEN_F32, t.get("blk.0.ssm_norm.weight").choice(), "ssm_norm is stored as w");
        for (String n : List.of("blk.0.attn_norm.weight", "blk.1.post_attention_norm.weight", "blk.1.attn_q_norm.weight",
                "blk.1.attn_k_norm.weight", "output_norm.weight")) {
            assertEquals(SynthesizedGgufPlanner.Choice.NORM_SHIFT_F32, t.get(n).choice(), n + " is stored as 1 + w");
        }
        assertEquals(List.of(64L, 256L), ne(t.get("blk.1.attn_q.weight")), "query and gate");
        assertNull(t.get("blk.1.attn_q.weight").rewrite());
    }

    @Test
    void writesTheConvertersKeys() throws Exception {
        var p = planOf(tensors(), config());
        Map<String, GgufKv> kv = p.kvs().stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals(p.kvs().size(), kv.size(), "no key twice");
        assertEquals("qwen35", kv.get("general.architecture").value());
        assertEquals(List.of(2, 1, 1, 0), ((GgufArray) kv.get("qwen35.rope.dimension_sections").value()).values());
        assertEquals(List.of(true, false), ((GgufArray) kv.get("qwen35.attention.recurrent_layers").value()).values());
        assertEquals(4, kv.get("qwen35.ssm.conv_kernel").value());
        assertEquals(32, kv.get("qwen35.ssm.state_size").value());
        assertEquals(2, kv.get("qwen35.ssm.group_count").value());
        assertEquals(4, kv.get("qwen35.ssm.time_step_rank").value());
        assertEquals(128, kv.get("qwen35.ssm.inner_size").value());
        assertEquals(4, kv.get("qwen35.full_attention_interval").value(), "the converter's default when config.json has none");
        assertEquals(8, kv.get("qwen35.rope.dimension_count").value(), "head_dim x partial_rotary_factor");
        assertEquals(32, kv.get("qwen35.attention.key_length").value());
        assertEquals(1.0e7f, kv.get("qwen35.rope.freq_base").value());
        ObjectNode noSections = config();
        ((ObjectNode) noSections.get("rope_parameters")).remove("mrope_section");
        var q = planOf(tensors(), noSections);
        assertEquals(List.of(11, 11, 10, 0), q.kvs().stream().filter(k -> k.key().equals("qwen35.rope.dimension_sections"))
                .map(k -> ((GgufArray) k.value()).values()).findFirst().orElseThrow(), "the converter's default sections");
    }

    @Test
    void theMtpHeadIsLeftOutAndAsManyKAsVHeadsMoveNothing() throws Exception {
        List<LogicalTensor> mtp = new ArrayList<>(tensors());
        mtp.add(bf16("mtp.fc.weight", 64, 128));
        mtp.add(bf16("mtp.layers.0.self_attn.q_proj.weight", 256, 64));
        assertEquals(planned(tensors(), config()).keySet(), planned(mtp, config()).keySet());

        ObjectNode same = config().put("linear_num_value_heads", 2);
        List<LogicalTensor> two = new ArrayList<>(tensors().stream().map(x -> switch (x.name()) {
            case "model.layers.0.linear_attn.in_proj_qkv.weight" -> bf16(x.name(), 192, 64);
            case "model.layers.0.linear_attn.in_proj_z.weight" -> bf16(x.name(), 64, 64);
            case "model.layers.0.linear_attn.in_proj_a.weight", "model.layers.0.linear_attn.in_proj_b.weight" -> bf16(x.name(), 2, 64);
            case "model.layers.0.linear_attn.A_log", "model.layers.0.linear_attn.dt_bias" -> bf16(x.name(), 2);
            case "model.layers.0.linear_attn.conv1d.weight" -> bf16(x.name(), 192, 1, 4);
            case "model.layers.0.linear_attn.out_proj.weight" -> bf16(x.name(), 64, 64);
            default -> x;
        }).toList());
        var t = planned(two, same);
        assertNull(t.get("blk.0.attn_qkv.weight").rewrite());
        assertNull(t.get("blk.0.ssm_out.weight").rewrite());
        assertNull(t.get("blk.0.ssm_a").rewrite().rows());
        assertEquals(List.of(4L, 192L), ne(t.get("blk.0.ssm_conv1d.weight")));
    }

    @Test
    void theTextOfQwen35WithVisionIsPlannedLikeTheTextModel() throws Exception {
        ObjectNode mm = JSON.createObjectNode();
        mm.putArray("architectures").add("Qwen3_5ForConditionalGeneration");
        mm.put("model_type", "qwen3_5");
        ObjectNode text = config();
        text.remove("architectures");
        mm.set("text_config", text);
        mm.putObject("vision_config").put("hidden_size", 32);
        List<LogicalTensor> tensors = new ArrayList<>(tensors().stream()
                .map(x -> x.name().startsWith("model.") ? bf16(x.name().replace("model.", "model.language_model."), x.logicalShape()) : x)
                .toList());
        tensors.add(bf16("model.visual.blocks.0.attn.qkv.weight", 96, 32));
        tensors.add(bf16("mtp.fc.weight", 64, 128));
        var p = planOf(tensors, mm);
        var want = planOf(tensors(), config());
        assertEquals(want.tensors().stream().map(SynthesizedGgufPlanner.TensorPlan::ggufName).toList(),
                p.tensors().stream().map(SynthesizedGgufPlanner.TensorPlan::ggufName).toList(), "the tower and the MTP head are left out");
        assertEquals(want.kvs().toString(), p.kvs().toString(), "the text config's KVs");
        assertEquals("model.language_model.layers.0.linear_attn.A_log", p.tensors().stream()
                .filter(t -> t.ggufName().equals("blk.0.ssm_a")).findFirst().orElseThrow().source().name());
    }

    /** The MoE model: the dense one with 4 experts of 32 and a shared expert of 48 in place of the dense feed-forward. */
    private static ObjectNode moeConfig() throws Exception {
        ObjectNode c = config();
        c.putArray("architectures").add("Qwen3_5MoeForCausalLM");
        c.put("model_type", "qwen3_5_moe_text");
        c.remove("intermediate_size");
        c.put("num_experts", 4).put("num_experts_per_tok", 2).put("moe_intermediate_size", 32).put("shared_expert_intermediate_size", 48);
        return c;
    }

    /** MoE tensors: experts stacked per projection ({@code fused}: gate and up fused, as the published checkpoints store them). */
    private static List<LogicalTensor> moeTensors(boolean fused) {
        List<LogicalTensor> out = new ArrayList<>(tensors().stream().filter(x -> !x.name().contains(".mlp.")).toList());
        for (int l = 0; l < 2; l++) {
            String p = "model.layers." + l + ".mlp.";
            out.addAll(List.of(bf16(p + "gate.weight", 4, 64), bf16(p + "shared_expert_gate.weight", 1, 64),
                    bf16(p + "shared_expert.gate_proj.weight", 48, 64), bf16(p + "shared_expert.up_proj.weight", 48, 64),
                    bf16(p + "shared_expert.down_proj.weight", 64, 48)));
            if (fused) {
                out.addAll(List.of(bf16(p + "experts.gate_up_proj", 4, 64, 64), bf16(p + "experts.down_proj", 4, 64, 32)));
            } else {
                out.addAll(List.of(bf16(p + "experts.gate_proj.weight", 4, 32, 64), bf16(p + "experts.up_proj.weight", 4, 32, 64),
                        bf16(p + "experts.down_proj.weight", 4, 64, 32)));
            }
        }
        return out;
    }

    @Test
    void theMoeTakesStackedOrFusedExperts() throws Exception {
        Map<String, SynthesizedGgufPlanner.TensorPlan> stacked = planned(moeTensors(false), moeConfig());
        Map<String, SynthesizedGgufPlanner.TensorPlan> fused = planned(moeTensors(true), moeConfig());
        assertEquals(stacked.keySet(), fused.keySet());
        assertEquals(List.of(64L, 32L, 4L), ne(fused.get("blk.1.ffn_gate_exps.weight")));
        assertEquals(List.of(64L, 32L, 4L), ne(fused.get("blk.1.ffn_up_exps.weight")));
        assertEquals(List.of(32L, 64L, 4L), ne(fused.get("blk.1.ffn_down_exps.weight")));
        var up = fused.get("blk.0.ffn_up_exps.weight");
        assertEquals("model.layers.0.mlp.experts.gate_up_proj", up.source().name());
        assertEquals(32 + 5, up.split().sourceRow(5), "expert 0's up rows follow its 32 gate rows");
        assertEquals(64 + 32 + 5, up.split().sourceRow(32 + 5), "expert 1's");
        assertEquals(0 + 5, fused.get("blk.0.ffn_gate_exps.weight").split().sourceRow(5));
        assertEquals(GgmlType.F32, fused.get("blk.0.ffn_gate_inp_shexp.weight").type());
        var p = planOf(moeTensors(true), moeConfig());
        assertEquals("qwen35moe", p.kvs().getFirst().value());
        assertFalse(p.kvs().stream().anyMatch(k -> k.key().equals("qwen35moe.feed_forward_length")), "no dense feed-forward");
        assertTrue(p.kvs().stream().anyMatch(k -> k.key().equals("qwen35moe.expert_shared_feed_forward_length") && k.value().equals(48)));
    }

    @Test
    void refusesWhatLlamaCppOrTheMappingWouldRunDifferently() throws Exception {
        List<LogicalTensor> missing = new ArrayList<>(tensors());
        missing.removeIf(x -> x.name().endsWith("linear_attn.A_log"));
        assertTrue(reason(plan(missing, config())).contains("blk.0.ssm_a"), "llama.cpp requires ssm_a");
        List<LogicalTensor> wrongLayer = new ArrayList<>(tensors());
        wrongLayer.add(bf16("model.layers.1.linear_attn.norm.weight", 32));
        assertTrue(reason(plan(wrongLayer, config())).contains("unexpected tensor"), "a delta-net tensor in an attention layer");
        assertTrue(reason(plan(tensors(), config().put("linear_num_value_heads", 3))).contains("multiple"));
        assertTrue(reason(plan(tensors(), config().put("attention_bias", true))).contains("attention biases"));
        ObjectNode types = config();
        types.putArray("layer_types").add("linear_attention").add("sliding_attention");
        assertTrue(reason(plan(tensors(), types)).contains("sliding_attention"));
        ObjectNode yarn = config();
        ((ObjectNode) yarn.get("rope_parameters")).put("rope_type", "yarn");
        assertTrue(reason(plan(tensors(), yarn)).contains("yarn"));
    }
}
