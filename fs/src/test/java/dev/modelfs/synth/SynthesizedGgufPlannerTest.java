package dev.modelfs.synth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.arch.QkPermutation;
import dev.modelfs.arch.TokenizerTables;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.model.BlobRange;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.quant.mlx.MlxQuant;
import dev.modelfs.store.Digest;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The pure planning of the synthesized GGUF and its row conversions, against independent decoders. */
class SynthesizedGgufPlannerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Digest BLOB = new Digest("a".repeat(64));
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static LogicalTensor plain(String name, Dtype dt, long... shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        StoredTensor s = new StoredTensor(name, dt, shape, new BlobRange(BLOB, 1L << 40, 0, n * (dt == Dtype.F32 ? 4 : 2)));
        return new LogicalTensor(name, "", name, s, null, null, null, null, shape);
    }

    /** An MLX int4 group-64 tensor of {@code rows × cols} (codes, BF16 scales and biases). */
    private static LogicalTensor int4(String name, long rows, long cols) {
        long groups = rows * cols / 64;
        StoredTensor codes = new StoredTensor(name, Dtype.U32, new long[]{rows, cols / 8}, new BlobRange(BLOB, 1L << 40, 0, rows * cols / 2));
        StoredTensor scale = new StoredTensor(name + ".scale", Dtype.BF16, new long[]{rows, cols / 64}, new BlobRange(BLOB, 1L << 40, 0, 2 * groups));
        StoredTensor bias = new StoredTensor(name + ".bias", Dtype.BF16, new long[]{rows, cols / 64}, new BlobRange(BLOB, 1L << 40, 0, 2 * groups));
        return new LogicalTensor(name, "", name, codes, scale, bias, null, MlxQuant.of("int4", 64), new long[]{rows, cols});
    }

    private static JsonNode config(String arch) throws Exception {
        return JSON.readTree("""
                {"architectures":["%s"],"hidden_size":64,"intermediate_size":128,"num_hidden_layers":1,
                 "num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"rms_norm_eps":1e-6,
                 "max_position_embeddings":256,"vocab_size":4,"rope_theta":10000.0}""".formatted(arch));
    }

    private static JsonNode tokenizer() {
        ObjectNode t = JSON.createObjectNode();
        ObjectNode m = t.putObject("model").put("type", "BPE");
        m.putObject("vocab").put("a", 0).put("b", 1).put("ab", 2);
        m.putArray("merges").add("a b");
        t.set("pre_tokenizer", TokenizerTables.PreTokenizer.QWEN2.toHf());
        t.putArray("added_tokens").addObject().put("id", 3).put("content", "<|im_end|>").put("special", true);
        return t;
    }

    private static List<LogicalTensor> qwen3Tensors() {
        List<LogicalTensor> out = new ArrayList<>(List.of(plain("model.embed_tokens.weight", Dtype.BF16, 4, 64),
                plain("model.norm.weight", Dtype.BF16, 64), plain("lm_head.weight", Dtype.BF16, 4, 64)));
        String p = "model.layers.0.";
        out.add(plain(p + "input_layernorm.weight", Dtype.BF16, 64));
        out.add(plain(p + "post_attention_layernorm.weight", Dtype.F32, 64));
        out.add(plain(p + "self_attn.q_proj.weight", Dtype.BF16, 64, 64));
        out.add(plain(p + "self_attn.k_proj.weight", Dtype.BF16, 32, 64));
        out.add(plain(p + "self_attn.v_proj.weight", Dtype.BF16, 32, 64));
        out.add(plain(p + "self_attn.o_proj.weight", Dtype.BF16, 64, 64));
        out.add(plain(p + "self_attn.q_norm.weight", Dtype.BF16, 16));
        out.add(plain(p + "self_attn.k_norm.weight", Dtype.BF16, 16));
        out.add(plain(p + "mlp.gate_proj.weight", Dtype.BF16, 128, 64));
        out.add(plain(p + "mlp.up_proj.weight", Dtype.BF16, 128, 64));
        out.add(plain(p + "mlp.down_proj.weight", Dtype.BF16, 64, 128));
        return out;
    }

    private static SynthesizedGgufPlanner.Result plan(List<LogicalTensor> ts, JsonNode cfg) {
        return SynthesizedGgufPlanner.plan("", ts, new SynthesizedGgufPlanner.Inputs("m:latest", cfg, tokenizer(), null, null), t -> true);
    }

    @Test
    void plansNamesTypesAndMetadata() throws Exception {
        var p = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, plan(qwen3Tensors(), config("Qwen3ForCausalLM"))).plan();
        Map<String, SynthesizedGgufPlanner.TensorPlan> byName = p.tensors().stream()
                .collect(Collectors.toMap(SynthesizedGgufPlanner.TensorPlan::ggufName, Function.identity()));
        assertEquals(14, byName.size());
        assertEquals("token_embd.weight", p.tensors().getFirst().ggufName());
        assertEquals("output.weight", p.tensors().getLast().ggufName());
        assertEquals(GgmlType.F32, byName.get("blk.0.attn_norm.weight").type());
        assertEquals(SynthesizedGgufPlanner.Choice.WIDEN_F32, byName.get("blk.0.attn_q_norm.weight").choice());
        assertEquals(SynthesizedGgufPlanner.Choice.COPY, byName.get("blk.0.ffn_norm.weight").choice());
        assertEquals(GgmlType.BF16, byName.get("blk.0.ffn_down.weight").type());
        assertEquals(List.of(128L, 64L), List.of(byName.get("blk.0.ffn_down.weight").ne()[0], byName.get("blk.0.ffn_down.weight").ne()[1]));
        assertEquals(null, byName.get("blk.0.attn_q.weight").permutation(), "qwen3 is not permuted");
        Map<String, GgufKv> kv = p.kvs().stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals("qwen3", kv.get("general.architecture").value());
        assertEquals("qwen2", kv.get("tokenizer.ggml.pre").value());
        assertEquals(3, kv.get("tokenizer.ggml.token_type").value() instanceof dev.modelfs.format.gguf.GgufArray a ? a.values().get(3) : null);
        assertEquals(32, p.fileType());
        var llama = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class,
                plan(qwen3Tensors().stream().filter(t -> !t.name().contains("_norm.weight") || t.name().contains("layernorm")).toList(),
                        config("LlamaForCausalLM"))).plan();
        var q = llama.tensors().stream().filter(t -> t.ggufName().equals("blk.0.attn_k.weight")).findFirst().orElseThrow();
        assertEquals(new QkPermutation(2, 32), q.permutation());
    }

    @Test
    void refusesWithAReason() throws Exception {
        ObjectNode lying = (ObjectNode) config("Qwen3ForCausalLM");
        lying.put("intermediate_size", 256);
        assertTrue(reason(plan(qwen3Tensors(), lying)).contains("config.json implies"));
        List<LogicalTensor> extra = new ArrayList<>(qwen3Tensors());
        extra.add(plain("model.layers.0.mystery.weight", Dtype.BF16, 64));
        assertTrue(reason(plan(extra, config("Qwen3ForCausalLM"))).contains("no GGUF name"));
        assertTrue(reason(plan(qwen3Tensors().subList(0, 10), config("Qwen3ForCausalLM"))).contains("missing"));
        assertTrue(reason(plan(qwen3Tensors(), config("Phi3ForCausalLM"))).contains("original_max_position_embeddings"));
        ObjectNode phi3 = ((ObjectNode) config("Phi3ForCausalLM")).put("original_max_position_embeddings", 256);
        assertTrue(reason(plan(qwen3Tensors(), phi3)).contains("self_attn.q_proj.weight has no GGUF name for phi3"));
        assertTrue(reason(plan(qwen3Tensors(), config("Gemma3nForCausalLM"))).contains("Gemma 3n"));
        assertTrue(reason(plan(qwen3Tensors(), config("Gemma2ForCausalLM"))).contains("gemma2"), "a Gemma 2 config without its fields");
        ObjectNode smallVocab = (ObjectNode) config("Qwen3ForCausalLM");
        smallVocab.put("vocab_size", 3);
        assertTrue(reason(plan(qwen3Tensors(), smallVocab)).contains("does not fit vocab_size 3"), "token 3 is beyond the vocabulary");
        assertTrue(reason(SynthesizedGgufPlanner.plan("", qwen3Tensors(),
                new SynthesizedGgufPlanner.Inputs("m", config("Qwen3ForCausalLM"), null, null, "tokenizer.json unreadable: x"), t -> true))
                .contains("unreadable"));
    }

    private static List<LogicalTensor> gemma3Tensors() {
        List<LogicalTensor> out = new ArrayList<>(qwen3Tensors().stream().filter(t -> !t.name().equals("lm_head.weight")).toList());
        out.add(plain("model.layers.0.pre_feedforward_layernorm.weight", Dtype.BF16, 64));
        out.add(plain("model.layers.0.post_feedforward_layernorm.weight", Dtype.BF16, 64));
        return out;
    }

    private static ObjectNode gemma3Config() throws Exception {
        ObjectNode c = (ObjectNode) config("Gemma3ForCausalLM");
        c.put("query_pre_attn_scalar", 16).put("sliding_window", 8).putNull("final_logit_softcapping");
        c.remove("rope_theta");
        ObjectNode rp = c.putObject("rope_parameters");
        rp.putObject("full_attention").put("rope_theta", 1000000.0).put("rope_type", "default");
        rp.putObject("sliding_attention").put("rope_theta", 10000.0).put("rope_type", "default");
        c.putArray("layer_types").add("sliding_attention");
        return c;
    }

    /** Gemma 3: every norm F32 as 1 + w, the post norms required, the KVs llama.cpp's gemma3 reads. */
    @Test
    void plansGemma3() throws Exception {
        var p = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, plan(gemma3Tensors(), gemma3Config())).plan();
        Map<String, SynthesizedGgufPlanner.TensorPlan> byName = p.tensors().stream()
                .collect(Collectors.toMap(SynthesizedGgufPlanner.TensorPlan::ggufName, Function.identity()));
        for (String n : List.of("output_norm", "blk.0.attn_norm", "blk.0.post_attention_norm", "blk.0.ffn_norm",
                "blk.0.post_ffw_norm", "blk.0.attn_q_norm", "blk.0.attn_k_norm")) {
            assertEquals(SynthesizedGgufPlanner.Choice.NORM_SHIFT_F32, byName.get(n + ".weight").choice(), n);
            assertEquals(GgmlType.F32, byName.get(n + ".weight").type(), n);
        }
        assertEquals(SynthesizedGgufPlanner.Choice.COPY, byName.get("blk.0.attn_q.weight").choice());
        Map<String, GgufKv> kv = p.kvs().stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals(1000000f, kv.get("gemma3.rope.freq_base").value());
        assertEquals(10000f, kv.get("gemma3.rope.freq_base_swa").value());
        assertEquals(8, kv.get("gemma3.attention.sliding_window").value());
        assertEquals(16, kv.get("gemma3.attention.key_length").value());
        assertTrue(reason(plan(gemma3Tensors().subList(0, gemma3Tensors().size() - 1), gemma3Config())).contains("post_ffw_norm"));
        ObjectNode scale = gemma3Config().put("query_pre_attn_scalar", 256);
        assertTrue(reason(plan(gemma3Tensors(), scale)).contains("query_pre_attn_scalar"));
        ObjectNode layers = gemma3Config();
        ((com.fasterxml.jackson.databind.node.ArrayNode) layers.get("layer_types")).set(0, "full_attention");
        assertTrue(reason(plan(gemma3Tensors(), layers)).contains("every 6th layer"));
        ObjectNode vocab = gemma3Config().put("vocab_size", 5);
        assertTrue(reason(plan(gemma3Tensors(), vocab)).contains("extra embedding rows"));
    }

    /** Gemma 3 4B and larger: linear rope scaling of the global layers, a tokenizer.json listing added tokens in its vocabulary too. */
    @Test
    void plansGemma3WithGlobalRopeScalingAndAddedTokensInTheVocabulary() throws Exception {
        ObjectNode c = gemma3Config();
        ((ObjectNode) c.get("rope_parameters").get("full_attention")).put("rope_type", "linear").put("factor", 8.0);
        ObjectNode tok = (ObjectNode) tokenizer();
        ((ObjectNode) tok.get("model").get("vocab")).put("<|im_end|>", 3);   // also an added token: 4 ids, counted 5 times
        var p = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, SynthesizedGgufPlanner.plan("", gemma3Tensors(),
                new SynthesizedGgufPlanner.Inputs("m", c, tok, null, null), t -> true)).plan();
        Map<String, GgufKv> kv = p.kvs().stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals("linear", kv.get("gemma3.rope.scaling.type").value());
        assertEquals(8f, kv.get("gemma3.rope.scaling.factor").value());
        assertEquals(1000000f, kv.get("gemma3.rope.freq_base").value());
        assertEquals(10000f, kv.get("gemma3.rope.freq_base_swa").value());
        ((ObjectNode) c.get("rope_parameters").get("full_attention")).put("rope_type", "yarn");
        assertTrue(reason(SynthesizedGgufPlanner.plan("", gemma3Tensors(), new SynthesizedGgufPlanner.Inputs("m", c, tok, null, null),
                t -> true)).contains("yarn"));
    }

    private static JsonNode moeConfig(String arch, String experts) throws Exception {
        return ((ObjectNode) config(arch)).put(experts, 3).put("num_experts_per_tok", 2).put("moe_intermediate_size", 32)
                .put("shared_expert_intermediate_size", 96);
    }

    private static List<LogicalTensor> attention(String p) {
        return new ArrayList<>(List.of(plain("model.embed_tokens.weight", Dtype.BF16, 4, 64), plain("model.norm.weight", Dtype.BF16, 64),
                plain("lm_head.weight", Dtype.BF16, 4, 64), plain(p + "input_layernorm.weight", Dtype.BF16, 64),
                plain(p + "post_attention_layernorm.weight", Dtype.BF16, 64), plain(p + "self_attn.q_proj.weight", Dtype.BF16, 64, 64),
                plain(p + "self_attn.k_proj.weight", Dtype.BF16, 32, 64), plain(p + "self_attn.v_proj.weight", Dtype.BF16, 32, 64),
                plain(p + "self_attn.o_proj.weight", Dtype.BF16, 64, 64)));
    }

    /** Mixtral: per-expert w1/w3/w2 (as Ollama keeps them) stacked into ffn_*_exps, expert after expert; llama KVs with experts. */
    @Test
    void plansMixtralFromPerExpertTensors() throws Exception {
        String p = "model.layers.0.";
        List<LogicalTensor> ts = attention(p);
        ts.add(plain(p + "block_sparse_moe.gate.weight", Dtype.BF16, 3, 64));
        for (int e = 2; e >= 0; e--) {
            ts.add(plain(p + "block_sparse_moe.experts." + e + ".w1.weight", Dtype.BF16, 128, 64));
            ts.add(plain(p + "block_sparse_moe.experts." + e + ".w3.weight", Dtype.BF16, 128, 64));
            ts.add(plain(p + "block_sparse_moe.experts." + e + ".w2.weight", Dtype.BF16, 64, 128));
        }
        var plan = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, plan(ts, moeConfig("MixtralForCausalLM", "num_local_experts"))).plan();
        Map<String, SynthesizedGgufPlanner.TensorPlan> byName = plan.tensors().stream()
                .collect(Collectors.toMap(SynthesizedGgufPlanner.TensorPlan::ggufName, Function.identity()));
        var down = byName.get("blk.0.ffn_down_exps.weight");
        assertEquals(List.of(128L, 64L, 3L), List.of(down.ne()[0], down.ne()[1], down.ne()[2]));
        assertEquals(List.of("model.layers.0.block_sparse_moe.experts.0.w2.weight", "model.layers.0.block_sparse_moe.experts.1.w2.weight",
                "model.layers.0.block_sparse_moe.experts.2.w2.weight"), down.parts().stream().map(t -> t.source().name()).toList());
        assertEquals(GgmlType.BF16, down.type());
        assertEquals(List.of(128L, 64L), List.of(down.parts().getFirst().ne()[0], down.parts().getFirst().ne()[1]));
        assertEquals(GgmlType.F32, byName.get("blk.0.ffn_gate_inp.weight").type(), "the router stays F32");
        assertEquals(new QkPermutation(2, 32), byName.get("blk.0.attn_k.weight").permutation(), "llama attention");
        Map<String, GgufKv> kv = plan.kvs().stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals("llama", kv.get("general.architecture").value());
        assertEquals(3, kv.get("llama.expert_count").value());
        assertEquals(2, kv.get("llama.expert_used_count").value());
        assertEquals(16, kv.get("llama.rope.dimension_count").value());
        // int4 experts: Q4_1 only when every expert's scales and biases are f16-exact, else every expert BF16
        List<LogicalTensor> q = new ArrayList<>(ts.stream().filter(t -> !t.name().contains(".experts.")).toList());
        for (int e = 0; e < 3; e++) {
            q.add(int4(p + "block_sparse_moe.experts." + e + ".w1.weight", 128, 64));
            q.add(int4(p + "block_sparse_moe.experts." + e + ".w3.weight", 128, 64));
            q.add(int4(p + "block_sparse_moe.experts." + e + ".w2.weight", 64, 128));
        }
        JsonNode mixtral = moeConfig("MixtralForCausalLM", "num_local_experts");
        var all = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, SynthesizedGgufPlanner.plan("", q,
                new SynthesizedGgufPlanner.Inputs("m", mixtral, tokenizer(), null, null), t -> true)).plan();
        assertEquals(GgmlType.Q4_1, all.tensors().stream().filter(t -> t.ggufName().equals("blk.0.ffn_up_exps.weight")).findFirst().orElseThrow().type());
        var some = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, SynthesizedGgufPlanner.plan("", q,
                new SynthesizedGgufPlanner.Inputs("m", mixtral, tokenizer(), null, null), t -> !t.name().contains("experts.1."))).plan();
        var up = some.tensors().stream().filter(t -> t.ggufName().equals("blk.0.ffn_up_exps.weight")).findFirst().orElseThrow();
        assertEquals(GgmlType.BF16, up.type());
        assertEquals(List.of(SynthesizedGgufPlanner.Choice.DEQUANT_BF16), up.parts().stream().map(SynthesizedGgufPlanner.TensorPlan::choice).distinct().toList());
        List<LogicalTensor> missing = ts.stream().filter(t -> !t.name().contains("experts.1.w3")).toList();
        assertTrue(reason(plan(missing, moeConfig("MixtralForCausalLM", "num_local_experts"))).contains("experts [0, 2] stored"));
    }

    /** Qwen2 MoE: stacked experts (Ollama's x/create), a shared expert with its [1, hidden] gate, q/k/v biases required. */
    @Test
    void plansQwen2MoeFromStackedTensors() throws Exception {
        String p = "model.layers.0.";
        List<LogicalTensor> ts = attention(p);
        for (String b : List.of("q", "k", "v")) {
            ts.add(plain(p + "self_attn." + b + "_proj.bias", Dtype.BF16, b.equals("q") ? 64 : 32));
        }
        ts.add(plain(p + "mlp.gate.weight", Dtype.BF16, 3, 64));
        ts.add(plain(p + "mlp.experts.gate_proj.weight", Dtype.BF16, 3, 32, 64));
        ts.add(plain(p + "mlp.experts.up_proj.weight", Dtype.BF16, 3, 32, 64));
        ts.add(plain(p + "mlp.experts.down_proj.weight", Dtype.BF16, 3, 64, 32));
        ts.add(plain(p + "mlp.shared_expert_gate.weight", Dtype.BF16, 1, 64));
        ts.add(plain(p + "mlp.shared_expert.gate_proj.weight", Dtype.BF16, 96, 64));
        ts.add(plain(p + "mlp.shared_expert.up_proj.weight", Dtype.BF16, 96, 64));
        ts.add(plain(p + "mlp.shared_expert.down_proj.weight", Dtype.BF16, 64, 96));
        var plan = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, plan(ts, moeConfig("Qwen2MoeForCausalLM", "num_experts"))).plan();
        Map<String, SynthesizedGgufPlanner.TensorPlan> byName = plan.tensors().stream()
                .collect(Collectors.toMap(SynthesizedGgufPlanner.TensorPlan::ggufName, Function.identity()));
        assertEquals(null, byName.get("blk.0.ffn_up_exps.weight").parts(), "already stacked: one source");
        assertEquals(GgmlType.F32, byName.get("blk.0.ffn_gate_inp_shexp.weight").type());
        assertEquals(GgmlType.BF16, byName.get("blk.0.ffn_down_shexp.weight").type());
        Map<String, GgufKv> kv = plan.kvs().stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals(32, kv.get("qwen2moe.expert_feed_forward_length").value());
        assertEquals(96, kv.get("qwen2moe.expert_shared_feed_forward_length").value());
        assertTrue(reason(plan(ts.stream().filter(t -> !t.name().endsWith("k_proj.bias")).toList(),
                moeConfig("Qwen2MoeForCausalLM", "num_experts"))).contains("blk.0.attn_k.bias"));
        assertTrue(reason(plan(ts, ((ObjectNode) moeConfig("Qwen2MoeForCausalLM", "num_experts")).put("norm_topk_prob", true)))
                .contains("norm_topk_prob"));
    }

    /** OLMo 2: no pre-norms, post-norms after attention and feed-forward, q/k norms as long as the projections. */
    @Test
    void plansOlmo2WithPostNormsAndWholeProjectionQkNorms() throws Exception {
        String p = "model.layers.0.";
        List<LogicalTensor> ts = new ArrayList<>(attention(p).stream().filter(t -> !t.name().contains("input_layernorm")).toList());
        ts.add(plain(p + "post_feedforward_layernorm.weight", Dtype.BF16, 64));
        ts.add(plain(p + "self_attn.q_norm.weight", Dtype.BF16, 64));
        ts.add(plain(p + "self_attn.k_norm.weight", Dtype.BF16, 32));
        ts.add(plain(p + "mlp.gate_proj.weight", Dtype.BF16, 128, 64));
        ts.add(plain(p + "mlp.up_proj.weight", Dtype.BF16, 128, 64));
        ts.add(plain(p + "mlp.down_proj.weight", Dtype.BF16, 64, 128));
        var plan = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, plan(ts, config("Olmo2ForCausalLM"))).plan();
        Map<String, SynthesizedGgufPlanner.TensorPlan> byName = plan.tensors().stream()
                .collect(Collectors.toMap(SynthesizedGgufPlanner.TensorPlan::ggufName, Function.identity()));
        assertEquals("olmo2", plan.kvs().getFirst().value());
        assertEquals(GgmlType.F32, byName.get("blk.0.post_attention_norm.weight").type());
        assertEquals(GgmlType.F32, byName.get("blk.0.post_ffw_norm.weight").type());
        assertEquals(List.of(64L), List.of(byName.get("blk.0.attn_q_norm.weight").ne()[0]));
        assertEquals(List.of(32L), List.of(byName.get("blk.0.attn_k_norm.weight").ne()[0]));
        assertEquals(null, byName.get("blk.0.attn_q.weight").permutation(), "NeoX rope: not permuted");
        assertTrue(!byName.containsKey("blk.0.attn_norm.weight") && !byName.containsKey("blk.0.ffn_norm.weight"));
        List<LogicalTensor> perHead = ts.stream().map(t -> t.name().endsWith("q_norm.weight")
                ? plain(t.name(), Dtype.BF16, 16) : t).toList();
        assertTrue(reason(plan(perHead, config("Olmo2ForCausalLM"))).contains("config.json implies [64]"));
        assertTrue(reason(plan(ts.stream().filter(t -> !t.name().contains("post_feedforward")).toList(), config("Olmo2ForCausalLM")))
                .contains("blk.0.post_ffw_norm.weight"));
        List<LogicalTensor> pre = new ArrayList<>(ts);
        pre.add(plain(p + "input_layernorm.weight", Dtype.BF16, 64));
        assertTrue(reason(plan(pre, config("Olmo2ForCausalLM"))).contains("input_layernorm"));
    }

    /** Phi-3 LongRoPE: the factors as F32 tensors computed from config.json, the converter's attention factor. */
    @Test
    void plansPhi3LongRopeFactorsAndAttentionFactor() throws Exception {
        String p = "model.layers.0.";
        List<LogicalTensor> ts = new ArrayList<>(List.of(plain("model.embed_tokens.weight", Dtype.BF16, 4, 64),
                plain("model.norm.weight", Dtype.BF16, 64), plain("lm_head.weight", Dtype.BF16, 4, 64),
                plain(p + "input_layernorm.weight", Dtype.BF16, 64), plain(p + "post_attention_layernorm.weight", Dtype.BF16, 64),
                plain(p + "self_attn.qkv_proj.weight", Dtype.BF16, 128, 64), plain(p + "self_attn.o_proj.weight", Dtype.BF16, 64, 64),
                plain(p + "mlp.gate_up_proj.weight", Dtype.BF16, 256, 64), plain(p + "mlp.down_proj.weight", Dtype.BF16, 64, 128)));
        ObjectNode cfg = (ObjectNode) config("Phi3ForCausalLM");
        cfg.put("original_max_position_embeddings", 64);
        ObjectNode rope = cfg.putObject("rope_parameters").put("rope_type", "longrope").put("rope_theta", 10000.0);
        rope.putArray("long_factor").add(1.0).add(2.0).add(3.0).add(4.0).add(5.0).add(6.0).add(7.0).add(8.5);
        rope.putArray("short_factor").add(1.0).add(1.0).add(1.0).add(1.0).add(1.5).add(1.5).add(2.0).add(2.0);
        var plan = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, plan(ts, cfg)).plan();
        Map<String, SynthesizedGgufPlanner.TensorPlan> byName = plan.tensors().stream()
                .collect(Collectors.toMap(SynthesizedGgufPlanner.TensorPlan::ggufName, Function.identity()));
        var lng = byName.get("rope_factors_long.weight");
        assertEquals(SynthesizedGgufPlanner.Choice.COMPUTED, lng.choice());
        assertEquals(8.5f, lng.computed()[7]);
        assertEquals(1.5f, byName.get("rope_factors_short.weight").computed()[4]);
        Map<String, GgufKv> kv = plan.kvs().stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals((float) Math.sqrt(1 + Math.log(4) / Math.log(64)), kv.get("phi3.rope.scaling.attn_factor").value());
        assertTrue(!kv.containsKey("phi3.rope.scaling.type"), "Phi3MiniModel writes no scaling type");
        rope.put("attention_factor", 1.0);
        assertTrue(reason(plan(ts, cfg)).contains("attention factor"));
        rope.remove("attention_factor");
        ((com.fasterxml.jackson.databind.node.ArrayNode) rope.get("short_factor")).remove(0);
        assertTrue(reason(plan(ts, cfg)).contains("short_factor is not a list of 8"));
        rope.put("rope_type", "dynamic");
        assertTrue(reason(plan(ts, cfg)).contains("rope scaling type dynamic"));
    }

    /** Granite MoE: input_linear [E, 2·ff, hidden] cut into ffn_gate_exps and ffn_up_exps, the rows of every expert. */
    @Test
    void plansGraniteMoeSplittingInputLinear() throws Exception {
        String p = "model.layers.0.";
        List<LogicalTensor> ts = attention(p);
        ts.add(plain(p + "block_sparse_moe.router.layer.weight", Dtype.BF16, 3, 64));
        ts.add(int4(p + "block_sparse_moe.input_linear.weight", 3 * 2 * 128, 64));
        ts.add(plain(p + "block_sparse_moe.output_linear.weight", Dtype.BF16, 3, 64, 128));
        ObjectNode cfg = (ObjectNode) moeConfig("GraniteMoeForCausalLM", "num_local_experts");
        cfg.put("intermediate_size", 128);
        ts.set(ts.size() - 2, reshaped(ts.get(ts.size() - 2), 3, 256, 64));
        var plan = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, plan(ts, cfg)).plan();
        Map<String, SynthesizedGgufPlanner.TensorPlan> byName = plan.tensors().stream()
                .collect(Collectors.toMap(SynthesizedGgufPlanner.TensorPlan::ggufName, Function.identity()));
        var gate = byName.get("blk.0.ffn_gate_exps.weight");
        var up = byName.get("blk.0.ffn_up_exps.weight");
        assertEquals(List.of(64L, 128L, 3L), List.of(gate.ne()[0], gate.ne()[1], gate.ne()[2]));
        assertEquals(GgmlType.Q4_1, up.type());
        assertEquals(new SynthesizedGgufPlanner.RowSplit(256, 128, 128), up.split());
        assertEquals(0, gate.split().sourceRow(0));
        assertEquals(127, gate.split().sourceRow(127));
        assertEquals(256, gate.split().sourceRow(128), "expert 1's gate rows follow expert 0's up rows");
        assertEquals(128, up.split().sourceRow(0));
        assertEquals(256 + 128 + 5, up.split().sourceRow(128 + 5));
        assertEquals(new QkPermutation(4, 64), byName.get("blk.0.attn_q.weight").permutation());
        assertEquals(GgmlType.F32, byName.get("blk.0.ffn_gate_inp.weight").type());
        Map<String, GgufKv> kv = plan.kvs().stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals(1f, kv.get("granitemoe.logit_scale").value());
        List<LogicalTensor> narrow = new ArrayList<>(ts);
        narrow.set(narrow.size() - 2, plain(p + "block_sparse_moe.input_linear.weight", Dtype.BF16, 3, 128, 64));
        assertTrue(reason(plan(narrow, cfg)).contains("config.json implies [3, 256, 64]"));
    }

    /** {@code t} with logical shape {@code shape} (same elements). */
    private static LogicalTensor reshaped(LogicalTensor t, long... shape) {
        return new LogicalTensor(t.name(), t.component(), t.relativeName(), t.main(), t.scale(), t.bias(), t.globalScale(), t.quant(), shape);
    }

    private static String reason(SynthesizedGgufPlanner.Result r) {
        return assertInstanceOf(SynthesizedGgufPlanner.Result.Refused.class, r).reason();
    }
}
