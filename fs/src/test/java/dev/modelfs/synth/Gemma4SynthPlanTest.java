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
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.store.Digest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The synthesized GGUF of a Gemma 4 text model (docs/FORMATS.md §7.5), planned from a two-layer model (a sliding layer of
 * head_dim 16, a full layer of global_head_dim 32 with a quarter rotated) against what llama.cpp's converter writes:
 * per-layer shapes, the layer scalar, {@code rope_freqs}, the layer pattern and head-dimension KVs, the {@code gemma4}
 * vocabulary; and the features it refuses.
 */
class Gemma4SynthPlanTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Digest BLOB = new Digest("b".repeat(64));

    private static LogicalTensor bf16(String name, long... shape) {
        return PlanTensors.bf16(BLOB, name, shape);
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

    private static String reason(SynthesizedGgufPlanner.Result r) {
        return assertInstanceOf(SynthesizedGgufPlanner.Result.Refused.class, r).reason();
    }

    private static List<Object> array(Map<String, GgufKv> kv, String key) {
        return ((GgufArray) kv.get(key).value()).values();
    }

    @Test
    void plansPerLayerHeadDimensionsLayerScalarsAndProportionalRope() throws Exception {
        var p = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, plan(tensors(), config())).plan();
        Map<String, SynthesizedGgufPlanner.TensorPlan> t = p.tensors().stream()
                .collect(Collectors.toMap(SynthesizedGgufPlanner.TensorPlan::ggufName, Function.identity()));
        assertEquals("rope_freqs.weight", p.tensors().getFirst().ggufName());
        float[] freqs = t.get("rope_freqs.weight").computed();
        assertEquals(16, freqs.length, "global_head_dim / 2 pairs");
        assertEquals(List.of(1f, 1f, 1f, 1f, 1e30f), List.of(freqs[0], freqs[1], freqs[2], freqs[3], freqs[4]),
                "int(32 * 0.25 / 2) = 4 rotated pairs, then 1e30");
        assertEquals(1e30f, freqs[15]);
        assertEquals(List.of(64L, 64L), Arrays.stream(t.get("blk.0.attn_q.weight").ne()).boxed().toList());
        assertEquals(List.of(64L, 128L), Arrays.stream(t.get("blk.1.attn_q.weight").ne()).boxed().toList());
        assertEquals(List.of(128L, 64L), Arrays.stream(t.get("blk.1.attn_output.weight").ne()).boxed().toList());
        assertEquals(List.of(32L), Arrays.stream(t.get("blk.1.attn_k_norm.weight").ne()).boxed().toList());
        var scale = t.get("blk.1.layer_output_scale.weight");
        assertEquals(GgmlType.F32, scale.type());
        assertEquals("model.layers.1.layer_scalar", scale.source().name());
        assertEquals(SynthesizedGgufPlanner.Choice.WIDEN_F32, t.get("blk.0.attn_norm.weight").choice(), "Gemma 4's norms are w, not 1 + w");
        assertFalse(t.containsKey("output.weight"), "tied embeddings");

        Map<String, GgufKv> kv = p.kvs().stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals(p.kvs().size(), kv.size(), "no key twice");
        assertEquals(32, kv.get("gemma4.attention.key_length").value());
        assertEquals(32, kv.get("gemma4.attention.value_length").value());
        assertEquals(16, kv.get("gemma4.attention.key_length_swa").value());
        assertEquals(16, kv.get("gemma4.attention.value_length_swa").value());
        assertEquals(32, kv.get("gemma4.rope.dimension_count").value());
        assertEquals(16, kv.get("gemma4.rope.dimension_count_swa").value());
        assertEquals(List.of(true, false), array(kv, "gemma4.attention.sliding_window_pattern"));
        assertEquals(1000000f, kv.get("gemma4.rope.freq_base").value());
        assertEquals(10000f, kv.get("gemma4.rope.freq_base_swa").value());
        assertEquals(30f, kv.get("gemma4.final_logit_softcapping").value());
        assertEquals(8, kv.get("gemma4.attention.sliding_window").value());
        assertEquals(0, kv.get("gemma4.attention.shared_kv_layers").value());
        assertEquals(0, kv.get("gemma4.embedding_length_per_layer_input").value());
        assertFalse(kv.containsKey("gemma4.rope.scaling.type"), "proportional rope is rope_freqs, not a scaling type");

        assertEquals("gemma4", kv.get("tokenizer.ggml.model").value());
        assertFalse(kv.containsKey("tokenizer.ggml.pre"), "the converter's Gemma 4 vocabulary has no pre-tokenizer key");
        assertEquals(List.of(-1000f, -1000f, -1000f, -1000f, -1000f, -1000f), array(kv, "tokenizer.ggml.scores"));
        assertEquals(List.of("▁ a"), array(kv, "tokenizer.ggml.merges"));
        // pad/eos/bos CONTROL (transformers' special tokens), <0x0A> BYTE, ▁a NORMAL, the visible <|tool_call> USER_DEFINED
        assertEquals(List.of(3, 3, 3, 6, 1, 4), array(kv, "tokenizer.ggml.token_type"));
        assertEquals(false, kv.get("tokenizer.ggml.add_space_prefix").value());
        assertEquals(true, kv.get("tokenizer.ggml.add_bos_token").value());
    }

    @Test
    void theTextOfGemma4WithVisionIsPlannedLikeTheTextModel() throws Exception {
        ObjectNode mm = JSON.createObjectNode();
        mm.putArray("architectures").add("Gemma4ForConditionalGeneration");
        mm.put("model_type", "gemma4");
        ObjectNode text = config();
        text.remove("architectures");
        text.put("model_type", "gemma4_text");
        mm.set("text_config", text);
        mm.putObject("vision_config").put("hidden_size", 32);
        List<LogicalTensor> tensors = new ArrayList<>(tensors().stream()
                .map(x -> bf16(x.name().replace("model.", "model.language_model."), x.logicalShape())).toList());
        tensors.add(bf16("model.vision_tower.encoder.layers.0.mlp.up_proj.linear.weight", 64, 32));
        tensors.add(bf16("model.embed_vision.embedding_projection.weight", 64, 32));
        var p = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, plan(tensors, mm)).plan();
        var want = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, plan(tensors(), config())).plan();
        assertEquals(want.tensors().stream().map(SynthesizedGgufPlanner.TensorPlan::ggufName).toList(),
                p.tensors().stream().map(SynthesizedGgufPlanner.TensorPlan::ggufName).toList(), "the towers are left out");
        assertEquals("model.language_model.layers.1.layer_scalar", p.tensors().stream()
                .filter(t -> t.ggufName().equals("blk.1.layer_output_scale.weight")).findFirst().orElseThrow().source().name());
        assertEquals(want.kvs().toString(), p.kvs().toString(), "the text config's KVs");
        tensors.add(bf16("model.multi_modal_projector.weight", 64, 32));
        assertTrue(reason(plan(tensors, mm)).contains("model.multi_modal_projector.weight"), "an unknown tensor still refuses");
        mm.remove("text_config");
        assertTrue(reason(plan(tensors(), mm)).contains("text_config"));
    }

    /** 26B-A4B / 31B's full layers: no v_proj (V is k_proj's output), one KV head against the sliding layer's two. */
    @Test
    void plansKeysSharedWithValuesAndAPerLayerKvHeadCount() throws Exception {
        List<LogicalTensor> t = new ArrayList<>(tensors());
        t.removeIf(x -> x.name().equals("model.layers.1.self_attn.v_proj.weight"));
        t.replaceAll(x -> x.name().equals("model.layers.1.self_attn.k_proj.weight") ? bf16(x.name(), 32, 64) : x);
        for (ObjectNode c : List.of(asPublished(config().put("attention_k_eq_v", true).put("num_global_key_value_heads", 1)),
                withPerLayerKv(config().put("attention_k_eq_v", true)))) {   // as transformers saves it: per_layer_config
            var r = plan(t, c);
            var p = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, r, () -> r.toString()).plan();
            Map<String, SynthesizedGgufPlanner.TensorPlan> byName = p.tensors().stream()
                    .collect(Collectors.toMap(SynthesizedGgufPlanner.TensorPlan::ggufName, Function.identity()));
            assertFalse(byName.containsKey("blk.1.attn_v.weight"));
            assertTrue(byName.containsKey("blk.0.attn_v.weight"));
            assertEquals(List.of(64L, 32L), Arrays.stream(byName.get("blk.1.attn_k.weight").ne()).boxed().toList());
            Map<String, GgufKv> kv = p.kvs().stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
            assertEquals(p.kvs().size(), kv.size(), "no key twice");
            assertEquals(GgufValueType.INT32, ((GgufArray) kv.get("gemma4.attention.head_count_kv").value()).elementType());
            assertEquals(List.of(2, 1), array(kv, "gemma4.attention.head_count_kv"), "the converter's per-layer array");
        }
        var scalar = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, plan(tensors(), config())).plan();
        assertEquals(2, scalar.kvs().stream().filter(k -> k.key().equals("gemma4.attention.head_count_kv")).findFirst().orElseThrow().value(),
                "no full-layer count in config.json: the scalar");
        List<LogicalTensor> wrongK = new ArrayList<>(t);
        wrongK.replaceAll(x -> x.name().equals("model.layers.1.self_attn.k_proj.weight") ? bf16(x.name(), 64, 64) : x);
        reason(plan(wrongK, asPublished(config().put("attention_k_eq_v", true).put("num_global_key_value_heads", 1))));
        assertTrue(reason(plan(t, config().put("attention_k_eq_v", true).put("num_global_key_value_heads", 1))).contains("KV heads"),
                "beside per_layer_config, transformers ignores num_global_key_value_heads; the converter does not");
        ObjectNode badKey = asPublished(config());
        badKey.putObject("per_layer_config").putObject("x").put("head_dim", 32);
        assertTrue(reason(plan(tensors(), badKey)).contains("not a layer index"));
    }

    /** As google/gemma-4-31B's config.json: global_head_dim, no per_layer_config. */
    private static ObjectNode asPublished(ObjectNode c) {
        c.remove("per_layer_config");
        return c.put("global_head_dim", 32);
    }

    private static ObjectNode withPerLayerKv(ObjectNode c) {
        ((ObjectNode) c.at("/per_layer_config/1")).put("num_key_value_heads", 1);
        return c;
    }

    @Test
    void refusesWhatLlamaCppOrTheMappingWouldRunDifferently() throws Exception {
        List<LogicalTensor> sliding = new ArrayList<>(tensors());
        sliding.replaceAll(x -> x.name().equals("model.layers.1.self_attn.q_proj.weight") ? bf16(x.name(), 64, 64) : x);
        assertTrue(reason(plan(sliding, config())).contains("config.json implies"), "a full layer needs global_head_dim");
        assertTrue(reason(plan(tensors(), config().put("hidden_size_per_layer_input", 256))).contains("per_layer_token_embd"),
                "per-layer embeddings need their tensors");
        assertTrue(reason(plan(tensors(), asPublished(config().put("num_global_key_value_heads", 1)))).contains("attention_k_eq_v"),
                "transformers ignores num_global_key_value_heads without attention_k_eq_v; the converter does not");
        assertTrue(reason(plan(tensors(), config().put("num_kv_shared_layers", 1))).contains("KV sharing"));
        assertTrue(reason(plan(tensors(), config().put("enable_moe_block", true))).contains("experts"));
        ObjectNode rope = config();
        ((ObjectNode) rope.at("/rope_parameters/full_attention")).put("rope_type", "default");
        assertTrue(reason(plan(tensors(), rope)).contains("proportional"));
        ObjectNode noGlobal = config();
        noGlobal.remove("per_layer_config");
        assertTrue(reason(plan(tensors(), noGlobal)).contains("global_head_dim"));
        ObjectNode types = config();
        types.putArray("layer_types").add("sliding_attention").add("chunked_attention");
        assertTrue(reason(plan(tensors(), types)).contains("chunked_attention"));
        assertTrue(reason(plan(tensors(), config().put("vocab_size", 10))).contains("extra embedding rows"));
    }

    /**
     * Gemma 4 E2B's form, shrunk (docs/FORMATS.md §7.4): 4 layers (sliding, full, sliding, full), per-layer inputs of 8, the last
     * two layers sharing layers 0 and 1's keys and values with double-wide MLPs. Written as llama.cpp's converter writes it.
     */
    private static ObjectNode e2bConfig() throws Exception {
        ObjectNode c = config().put("num_hidden_layers", 4).put("hidden_size_per_layer_input", 8).put("vocab_size_per_layer_input", 6)
                .put("num_kv_shared_layers", 2).put("use_double_wide_mlp", true);
        c.putArray("layer_types").add("sliding_attention").add("full_attention").add("sliding_attention").add("full_attention");
        ((ObjectNode) c.get("per_layer_config")).putObject("3").put("head_dim", 32);
        return c;
    }

    private static List<LogicalTensor> e2bTensors() {
        List<LogicalTensor> out = new ArrayList<>(List.of(bf16("model.embed_tokens.weight", 6, 64), bf16("model.norm.weight", 64),
                bf16("model.embed_tokens_per_layer.weight", 6, 32), bf16("model.per_layer_model_projection.weight", 32, 64),
                bf16("model.per_layer_projection_norm.weight", 8)));
        for (int l = 0; l < 4; l++) {
            String p = "model.layers." + l + ".";
            long hd = l % 2 == 0 ? 16 : 32, ff = l >= 2 ? 256 : 128;
            for (String n : List.of("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm",
                    "post_per_layer_input_norm")) {
                out.add(bf16(p + n + ".weight", 64));
            }
            out.add(bf16(p + "layer_scalar", 1));
            out.add(bf16(p + "self_attn.q_proj.weight", 4 * hd, 64));
            if (l < 2) {   // the sharing layers have no keys and values of their own
                out.add(bf16(p + "self_attn.k_proj.weight", 2 * hd, 64));
                out.add(bf16(p + "self_attn.v_proj.weight", 2 * hd, 64));
                out.add(bf16(p + "self_attn.k_norm.weight", hd));
            }
            out.add(bf16(p + "self_attn.o_proj.weight", 64, 4 * hd));
            out.add(bf16(p + "self_attn.q_norm.weight", hd));
            out.add(bf16(p + "mlp.gate_proj.weight", ff, 64));
            out.add(bf16(p + "mlp.up_proj.weight", ff, 64));
            out.add(bf16(p + "mlp.down_proj.weight", 64, ff));
            out.add(bf16(p + "per_layer_input_gate.weight", 8, 64));
            out.add(bf16(p + "per_layer_projection.weight", 64, 8));
        }
        return out;
    }

    @Test
    void plansPerLayerEmbeddingsKvSharingAndDoubleWideMlps() throws Exception {
        var p = assertInstanceOf(SynthesizedGgufPlanner.Result.Planned.class, plan(e2bTensors(), e2bConfig())).plan();
        Map<String, SynthesizedGgufPlanner.TensorPlan> t = p.tensors().stream()
                .collect(Collectors.toMap(SynthesizedGgufPlanner.TensorPlan::ggufName, Function.identity()));
        assertEquals(List.of(32L, 6L), Arrays.stream(t.get("per_layer_token_embd.weight").ne()).boxed().toList());
        assertEquals(List.of(64L, 32L), Arrays.stream(t.get("per_layer_model_proj.weight").ne()).boxed().toList());
        assertEquals(GgmlType.F32, t.get("per_layer_proj_norm.weight").type());
        assertEquals(List.of(64L, 8L), Arrays.stream(t.get("blk.3.inp_gate.weight").ne()).boxed().toList());
        assertEquals(List.of(8L, 64L), Arrays.stream(t.get("blk.3.proj.weight").ne()).boxed().toList());
        assertEquals(GgmlType.F32, t.get("blk.3.post_norm.weight").type());
        assertEquals(List.of(256L, 64L), Arrays.stream(t.get("blk.2.ffn_down.weight").ne()).boxed().toList());
        assertEquals(List.of(64L, 128L), Arrays.stream(t.get("blk.1.ffn_gate.weight").ne()).boxed().toList());
        assertFalse(t.containsKey("blk.3.attn_k.weight"));
        assertTrue(t.containsKey("blk.1.attn_k_norm.weight"));
        Map<String, GgufKv> kv = p.kvs().stream().collect(Collectors.toMap(GgufKv::key, Function.identity()));
        assertEquals(p.kvs().size(), kv.size(), "no key twice");
        assertEquals(2, kv.get("gemma4.attention.shared_kv_layers").value());
        assertEquals(8, kv.get("gemma4.embedding_length_per_layer_input").value());
        GgufKv ff = kv.get("gemma4.feed_forward_length");
        assertEquals(GgufValueType.INT32, ((GgufArray) ff.value()).elementType(), "gguf-py writes Python ints as INT32");
        assertEquals(List.of(128, 128, 256, 256), array(kv, "gemma4.feed_forward_length"));
        assertTrue(p.kvs().indexOf(ff) < p.kvs().indexOf(kv.get("gemma4.attention.head_count")), "in the scalar's place");
    }

    @Test
    void refusesSharingLlamaCppWouldReadFromAnotherLayer() throws Exception {
        ObjectNode swapped = e2bConfig();   // full then sliding: transformers reads layer 1 for the sliding layer 2, llama.cpp layer 0
        swapped.putArray("layer_types").add("sliding_attention").add("sliding_attention").add("full_attention").add("full_attention");
        assertTrue(reason(plan(e2bTensors(), swapped)).contains("layer 1 in llama.cpp"), reason(plan(e2bTensors(), swapped)));
        List<LogicalTensor> noGate = new ArrayList<>(e2bTensors());
        noGate.removeIf(x -> x.name().equals("model.layers.2.per_layer_input_gate.weight"));
        assertTrue(reason(plan(noGate, e2bConfig())).contains("blk.2.inp_gate.weight"));
        assertTrue(reason(plan(e2bTensors(), e2bConfig().put("use_double_wide_mlp", false))).contains("config.json implies"));
        assertTrue(reason(plan(e2bTensors(), e2bConfig().put("vocab_size_per_layer_input", 7))).contains("vocab_size_per_layer_input"));
    }

    // ---- experts (26B-A4B; Gemma4Experts): the routed block beside the dense MLP as the converter writes it from the
    // stacked tensors x/create stores (router and its scales, fused ffn_gate_up_exps, the three norms, the expert KVs)

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
}
