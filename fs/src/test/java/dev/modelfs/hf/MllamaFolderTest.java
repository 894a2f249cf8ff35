package dev.modelfs.hf;

import static dev.modelfs.hf.HfFolderTest.kv;
import static dev.modelfs.hf.HfFolderTest.strings;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.arch.Architecture;
import dev.modelfs.arch.QkPermutation;
import dev.modelfs.arch.TensorNames;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The Hugging Face folder of Ollama's {@code mllama} GGUF (Llama 3.2 Vision, docs/FORMATS.md §7.3): a self-attention layer
 * and a cross-attention layer mapped to {@code MllamaForCausalLM}'s names, the cross-attention q/k rows permuted back like
 * self-attention's, the gates under their suffix-less names, the vision tower left out, and the config nested as the
 * {@code text_config} of a {@code model_type: mllama} file.
 */
class MllamaFolderTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> TEXT = List.of("token_embd.weight:64,12", "output.weight:64,4", "output_norm.weight:64",
            "rope_freqs.weight:8",
            "blk.0.attn_norm.weight:64", "blk.0.attn_q.weight:64,64", "blk.0.attn_k.weight:64,32", "blk.0.attn_v.weight:64,32",
            "blk.0.attn_output.weight:64,64", "blk.0.ffn_norm.weight:64", "blk.0.ffn_gate.weight:64,128:F16",
            "blk.0.ffn_up.weight:64,128:F16", "blk.0.ffn_down.weight:128,64:F16",
            "blk.1.attn_norm.weight:64", "blk.1.cross_attn_q_proj.weight:64,64", "blk.1.cross_attn_k_proj.weight:64,32",
            "blk.1.cross_attn_v_proj.weight:64,32", "blk.1.cross_attn_o_proj.weight:64,64", "blk.1.cross_attn_q_norm.weight:16",
            "blk.1.cross_attn_k_norm.weight:16", "blk.1.cross_attn_attn_gate:1", "blk.1.cross_attn_mlp_gate:1",
            "blk.1.ffn_norm.weight:64", "blk.1.ffn_gate.weight:64,128", "blk.1.ffn_up.weight:64,128", "blk.1.ffn_down.weight:128,64");
    private static final List<String> VISION = List.of("v.blk.0.attn_q.weight:32,32:F16", "v.class_embd:32", "v.position_embd.gate:1",
            "mm.0.weight:64,64:F16", "mm.0.bias:64");

    /** An mllama GGUF as Ollama's converter lays it out: 2 text layers (layer 1 cross-attention), a vocabulary of 5 (the last <|image|>). */
    static GgufFile model(List<String> tensorSpecs, int[] crossLayers) {
        String a = "mllama.";
        List<GgufKv> kvs = new ArrayList<>(List.of(
                kv("general.architecture", GgufValueType.STRING, "mllama"),
                kv(a + "embedding_length", GgufValueType.UINT32, 64), kv(a + "block_count", GgufValueType.UINT32, 2),
                kv(a + "feed_forward_length", GgufValueType.UINT32, 128), kv(a + "attention.head_count", GgufValueType.UINT32, 4),
                kv(a + "attention.head_count_kv", GgufValueType.UINT32, 2), kv(a + "rope.dimension_count", GgufValueType.UINT32, 16),
                kv(a + "attention.layer_norm_rms_epsilon", GgufValueType.FLOAT32, 1e-5f), kv(a + "context_length", GgufValueType.UINT32, 512),
                kv(a + "rope.freq_base", GgufValueType.FLOAT32, 500000f), kv(a + "vocab_size", GgufValueType.UINT32, 4),
                kv(a + "vision.block_count", GgufValueType.UINT32, 1),
                kv("tokenizer.ggml.model", GgufValueType.STRING, "gpt2"), kv("tokenizer.ggml.pre", GgufValueType.STRING, "llama-bpe"),
                strings("tokenizer.ggml.tokens", List.of("a", "b", "ab", "<|eot_id|>", "<|image|>")),
                kv("tokenizer.ggml.token_type", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(1, 1, 1, 3, 3))),
                strings("tokenizer.ggml.merges", List.of("a b")), kv("tokenizer.ggml.eos_token_id", GgufValueType.UINT32, 3)));
        if (crossLayers != null) {
            List<Object> layers = new ArrayList<>();
            for (int l : crossLayers) {
                layers.add(l);
            }
            kvs.add(kv(a + "attention.cross_attention_layers", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, layers)));
        }
        return new GgufFile(3, 32, kvs, HfFolderTest.tensors(tensorSpecs), 4096);
    }

    private static List<String> with(List<String> base, List<String> extra) {
        List<String> out = new ArrayList<>(base);
        out.addAll(extra);
        return out;
    }

    private static float[] llama3Freqs() {
        return dev.modelfs.arch.RopeFreqs.llama3(new dev.modelfs.arch.ConfigKeys.RopeScaling("llama3", 8f, Optional.of(8192), 1f, 4f),
                500000f, 16);
    }

    @Test
    void crossAttentionLayersAreMappedAndTheVisionTowerLeftOut() throws Exception {
        HfFolder f = HfFolder.of(model(with(TEXT, VISION), new int[] {1}), Map.of("rope_freqs.weight", llama3Freqs()));
        Map<String, HfTensor> t = HfFolderTest.byName(f);
        Set<String> want = new TreeSet<>(List.of("model.embed_tokens.weight", "lm_head.weight", "model.norm.weight",
                "model.layers.0.input_layernorm.weight", "model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight",
                "model.layers.0.self_attn.v_proj.weight", "model.layers.0.self_attn.o_proj.weight",
                "model.layers.0.post_attention_layernorm.weight", "model.layers.0.mlp.gate_proj.weight", "model.layers.0.mlp.up_proj.weight",
                "model.layers.0.mlp.down_proj.weight", "model.layers.1.input_layernorm.weight", "model.layers.1.cross_attn.q_proj.weight",
                "model.layers.1.cross_attn.k_proj.weight", "model.layers.1.cross_attn.v_proj.weight", "model.layers.1.cross_attn.o_proj.weight",
                "model.layers.1.cross_attn.q_norm.weight", "model.layers.1.cross_attn.k_norm.weight", "model.layers.1.cross_attn_attn_gate",
                "model.layers.1.cross_attn_mlp_gate", "model.layers.1.post_attention_layernorm.weight", "model.layers.1.mlp.gate_proj.weight",
                "model.layers.1.mlp.up_proj.weight", "model.layers.1.mlp.down_proj.weight"));
        assertEquals(want, new TreeSet<>(t.keySet()), "every text tensor, no vision tensor, no rope_freqs");
        assertArrayEquals(new long[] {1}, t.get("model.layers.1.cross_attn_attn_gate").shape());
        assertArrayEquals(new long[] {12, 64}, t.get("model.embed_tokens.weight").shape());
        HfTensor q = t.get("model.layers.1.cross_attn.q_proj.weight");   // 4 heads of 16 rows, as self-attention's q
        assertEquals(2, q.sourceRow().applyAsLong(1));
        assertEquals(1, q.sourceRow().applyAsLong(8));
        HfTensor k = t.get("model.layers.1.cross_attn.k_proj.weight");   // 2 key heads
        assertEquals(32, k.rows());
        assertEquals(3, k.sourceRow().applyAsLong(9));
        assertNull(t.get("model.layers.1.cross_attn.v_proj.weight").sourceRow());
        assertNull(t.get("model.layers.1.cross_attn.q_norm.weight").sourceRow());
        assertEquals(1, t.get("model.layers.0.self_attn.q_proj.weight").sourceRow().applyAsLong(8));

        JsonNode c = JSON.readTree(f.config());
        assertEquals("MllamaForCausalLM", c.path("architectures").path(0).asText());
        assertEquals("MllamaForCausalLM", f.hfArchitecture());
        assertEquals("mllama", c.path("model_type").asText());
        JsonNode text = c.path("text_config");
        assertEquals("mllama_text_model", text.path("model_type").asText());
        assertEquals(4, text.path("vocab_size").asInt(), "lm_head's rows; the embedding has 8 more");
        assertEquals("[1]", text.path("cross_attention_layers").toString());
        assertFalse(text.has("head_dim") || text.has("attention_bias") || text.has("architectures"), text.toString());
        assertEquals("llama3", text.path("rope_scaling").path("rope_type").asText());
        assertEquals(8.0, text.path("rope_scaling").path("factor").asDouble());
        assertEquals(3, text.path("eos_token_id").asInt());
        assertFalse(text.path("tie_word_embeddings").asBoolean());
        assertTrue(c.has("torch_dtype") && !text.has("torch_dtype"));
        assertTrue(f.tokenizerJson() != null, f.tokenizerProblem());
    }

    @Test
    void crossAttentionQueryAndKeyRowsArePermutedLikeSelfAttentions() {
        assertEquals(Optional.of(QkPermutation.Which.Q), TensorNames.permutation(Architecture.MLLAMA, "blk.1.cross_attn_q_proj.weight"));
        assertEquals(Optional.of(QkPermutation.Which.K), TensorNames.permutation(Architecture.MLLAMA, "blk.1.cross_attn_k_proj.weight"));
        assertEquals(Optional.of(QkPermutation.Which.Q), TensorNames.permutation(Architecture.MLLAMA, "blk.0.attn_q.weight"));
        assertEquals(Optional.empty(), TensorNames.permutation(Architecture.MLLAMA, "blk.1.cross_attn_v_proj.weight"));
        assertEquals(Optional.empty(), TensorNames.permutation(Architecture.LLAMA, "blk.1.cross_attn_q_proj.weight"));
        assertTrue(Architecture.MLLAMA.spec().hfLeavesOut("v.blk.0.attn_q.weight", null, "mllama.") && Architecture.MLLAMA.spec().hfLeavesOut("mm.0.weight", null, "mllama."));
        assertFalse(Architecture.LLAMA.spec().hfLeavesOut("v.blk.0.attn_q.weight", null, "mllama."));
    }

    @Test
    void whatMllamaForCausalLmWouldRunDifferentlyIsRefused() {
        var freqs = Map.of("rope_freqs.weight", llama3Freqs());
        List<String> sameRows = new ArrayList<>(TEXT);
        sameRows.set(0, "token_embd.weight:64,4");
        var embd = assertThrows(HfUnsupported.class, () -> HfFolder.of(model(sameRows, new int[] {1}), freqs));
        assertTrue(embd.getMessage().contains("token_embd.weight has 4 rows"), embd.getMessage());
        List<String> tied = new ArrayList<>(TEXT);
        tied.remove("output.weight:64,4");
        var noOutput = assertThrows(HfUnsupported.class, () -> HfFolder.of(model(tied, new int[] {1}), freqs));
        assertTrue(noOutput.getMessage().contains("output.weight"), noOutput.getMessage());
        var layers = assertThrows(HfUnsupported.class, () -> HfFolder.of(model(TEXT, new int[] {0}), freqs));
        assertTrue(layers.getMessage().contains("cross_attention_layers [0]"), layers.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Architecture.MLLAMA.spec().checkHfConfig(JSON.createObjectNode()),
                "no synthesized GGUF: upstream llama.cpp has no mllama");
        // without the KV the layers come from the tensors alone
        assertTrue(HfFolder.of(model(TEXT, null), freqs).config().length > 0);
    }
}
