package dev.modelfs.hf;

import static dev.modelfs.hf.HfFolderTest.byName;
import static dev.modelfs.hf.HfFolderTest.kv;
import static dev.modelfs.hf.HfFolderTest.strings;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.arch.Architecture;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The Hugging Face and sentence-transformers folders of encoder GGUFs (bert, XLM-RoBERTa as bert, nomic-bert). */
class EncoderFolderTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A 1-layer encoder (hidden 64, 4 heads, ff 128, context 32) with the given vocabulary KVs and tensors. */
    static GgufFile encoder(String arch, List<GgufKv> vocab, List<String> layerTensors, boolean positions, long pooling) {
        List<GgufKv> kvs = new ArrayList<>(List.of(
                kv("general.architecture", GgufValueType.STRING, arch),
                kv(arch + ".embedding_length", GgufValueType.UINT32, 64),
                kv(arch + ".block_count", GgufValueType.UINT32, 1),
                kv(arch + ".feed_forward_length", GgufValueType.UINT32, 128),
                kv(arch + ".attention.head_count", GgufValueType.UINT32, 4),
                kv(arch + ".attention.layer_norm_epsilon", GgufValueType.FLOAT32, 1e-12f),
                kv(arch + ".context_length", GgufValueType.UINT32, 32),
                kv(arch + ".pooling_type", GgufValueType.UINT32, (int) pooling),
                kv("tokenizer.ggml.token_type_count", GgufValueType.UINT32, 2)));
        kvs.addAll(vocab);
        List<String> names = new ArrayList<>(List.of("token_embd.weight:64,6", "token_types.weight:64,2",
                "token_embd_norm.weight:64", "token_embd_norm.bias:64"));
        if (positions) {
            names.add("position_embd.weight:64,32:Q8_0");
        }
        names.addAll(layerTensors);
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

    static List<String> bertLayer() {
        return List.of("blk.0.attn_q.weight:64,64", "blk.0.attn_q.bias:64", "blk.0.attn_k.weight:64,64", "blk.0.attn_v.weight:64,64",
                "blk.0.attn_output.weight:64,64", "blk.0.attn_output_norm.weight:64", "blk.0.attn_output_norm.bias:64",
                "blk.0.ffn_up.weight:64,128", "blk.0.ffn_down.weight:128,64", "blk.0.layer_output_norm.weight:64",
                "blk.0.layer_output_norm.bias:64");
    }

    static GgufKv ints(String k, List<Integer> v) {
        return kv(k, GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.copyOf(v)));
    }

    /** llama.cpp's converter's form of a WordPiece vocabulary: [PAD] [UNK] [CLS] [SEP] control, phantom-space words. */
    static List<GgufKv> wordPiece() {
        return List.of(kv("tokenizer.ggml.model", GgufValueType.STRING, "bert"),
                strings("tokenizer.ggml.tokens", List.of("[PAD]", "[UNK]", "[CLS]", "[SEP]", "\u2581hello", "lo", "[unused0]")),
                ints("tokenizer.ggml.token_type", List.of(3, 3, 3, 3, 1, 1, 1)),
                kv("tokenizer.ggml.bos_token_id", GgufValueType.UINT32, 2),
                kv("tokenizer.ggml.seperator_token_id", GgufValueType.UINT32, 3),
                kv("tokenizer.ggml.unknown_token_id", GgufValueType.UINT32, 1),
                kv("tokenizer.ggml.padding_token_id", GgufValueType.UINT32, 0));
    }

    @Test
    void bertIsABertModelWithMeanPoolingAndAWordPieceTokenizer() throws Exception {
        HfFolder f = HfFolder.of(encoder("bert", wordPiece(), bertLayer(), true, 1));
        assertEquals(Architecture.BERT, f.arch());
        Map<String, HfTensor> t = byName(f);
        assertEquals(16, t.size());
        assertArrayEquals(new long[] {64, 64}, t.get("encoder.layer.0.attention.self.query.weight").shape());
        assertTrue(t.containsKey("encoder.layer.0.attention.self.query.bias"));
        assertArrayEquals(new long[] {128, 64}, t.get("encoder.layer.0.intermediate.dense.weight").shape());
        assertArrayEquals(new long[] {32, 64}, t.get("embeddings.position_embeddings.weight").shape());
        assertEquals(0, t.get("embeddings.position_embeddings.weight").zeroRows());
        assertTrue(t.containsKey("embeddings.LayerNorm.bias"));
        JsonNode c = JSON.readTree(f.config());
        assertEquals("BertModel", c.get("architectures").get(0).asText());
        assertEquals("bert", c.get("model_type").asText());
        assertEquals("gelu", c.get("hidden_act").asText());
        assertEquals(1e-12, c.get("layer_norm_eps").asDouble());
        assertEquals(2, c.get("type_vocab_size").asInt());
        assertEquals(32, c.get("max_position_embeddings").asInt());
        assertFalse(c.has("num_key_value_heads") || c.has("tie_word_embeddings") || c.has("rms_norm_eps"), c.toString());
        JsonNode tok = JSON.readTree(f.tokenizerJson());
        assertEquals("WordPiece", tok.get("model").get("type").asText());
        assertEquals(4, tok.get("model").get("vocab").get("hello").asInt());
        assertEquals(5, tok.get("model").get("vocab").get("##lo").asInt());
        assertEquals(2, tok.get("model").get("vocab").get("[CLS]").asInt());
        assertEquals(6, tok.get("model").get("vocab").get("[unused0]").asInt(), "Ollama's converter keeps [bracketed] tokens");
        assertTrue(tok.get("normalizer").get("lowercase").asBoolean());
        assertTrue(tok.get("normalizer").get("strip_accents").asBoolean());
        assertEquals("[CLS]", tok.get("post_processor").get("single").get(0).get("SpecialToken").get("id").asText());
        assertEquals("[SEP]", tok.get("post_processor").get("single").get(2).get("SpecialToken").get("id").asText());
        assertEquals(1, tok.get("post_processor").get("pair").get(4).get("SpecialToken").get("type_id").asInt());
        JsonNode tc = JSON.readTree(f.tokenizerConfig());
        assertEquals("[CLS]", tc.get("cls_token").asText());
        assertEquals("[PAD]", tc.get("pad_token").asText());
        assertArrayEquals(HfFolder.tokenizerJsonOf(encoder("bert", wordPiece(), bertLayer(), true, 1)), f.tokenizerJson());
        Map<String, byte[]> st = f.sentenceTransformers();
        assertEquals(List.of("modules.json", "sentence_bert_config.json", "1_Pooling/config.json", "config_sentence_transformers.json"),
                List.copyOf(st.keySet()));
        JsonNode pool = JSON.readTree(st.get("1_Pooling/config.json"));
        assertTrue(pool.get("pooling_mode_mean_tokens").asBoolean());
        assertFalse(pool.get("pooling_mode_cls_token").asBoolean() || pool.get("pooling_mode_lasttoken").asBoolean());
        assertEquals(64, pool.get("word_embedding_dimension").asInt());
        JsonNode mods = JSON.readTree(st.get("modules.json"));
        assertEquals("sentence_transformers.models.Normalize", mods.get(2).get("type").asText());
        assertEquals("", mods.get(0).get("path").asText());
        assertEquals(32, JSON.readTree(st.get("sentence_bert_config.json")).get("max_seq_length").asInt());
    }

    @Test
    void lowercaseAndAccentsFollowTheNormalizerKeys() throws Exception {
        List<GgufKv> v = new ArrayList<>(wordPiece());
        v.add(kv("tokenizer.ggml.normalizer.lowercase", GgufValueType.BOOL, false));
        JsonNode n = JSON.readTree(HfFolder.of(encoder("bert", v, bertLayer(), true, 2)).tokenizerJson()).get("normalizer");
        assertFalse(n.get("lowercase").asBoolean());
        assertFalse(n.get("strip_accents").asBoolean(), "llama.cpp: strip_accents defaults to lowercase");
    }

    @Test
    void xlmRobertaGetsItsCutPositionRowsBackAsZerosAndAUnigramTokenizer() throws Exception {
        List<GgufKv> v = List.of(kv("tokenizer.ggml.model", GgufValueType.STRING, "t5"),
                strings("tokenizer.ggml.tokens", List.of("<s>", "<pad>", "</s>", "<unk>", "\u2581a", "[PAD5]")),
                ints("tokenizer.ggml.token_type", List.of(3, 3, 3, 2, 1, 5)),
                kv("tokenizer.ggml.mask_token_id", GgufValueType.UINT32, 5),   // the converter's lost <mask>
                kv("tokenizer.ggml.scores", GgufValueType.ARRAY, new GgufArray(GgufValueType.FLOAT32, List.of(0f, 0f, 0f, 0f, -1.5f, -2f))),
                kv("tokenizer.ggml.bos_token_id", GgufValueType.UINT32, 0),
                kv("tokenizer.ggml.eos_token_id", GgufValueType.UINT32, 2),
                kv("tokenizer.ggml.unknown_token_id", GgufValueType.UINT32, 3),
                kv("tokenizer.ggml.padding_token_id", GgufValueType.UINT32, 1),
                kv("tokenizer.ggml.add_space_prefix", GgufValueType.BOOL, true),
                kv("tokenizer.ggml.remove_extra_whitespaces", GgufValueType.BOOL, true),
                kv("tokenizer.ggml.precompiled_charsmap", GgufValueType.ARRAY, new GgufArray(GgufValueType.UINT8, List.of((byte) 1, (byte) 2, (byte) -1))));
        HfFolder f = HfFolder.of(encoder("bert", v, bertLayer(), true, 2));
        assertEquals(Architecture.XLM_ROBERTA, f.arch());
        HfTensor pos = byName(f).get("embeddings.position_embeddings.weight");
        assertArrayEquals(new long[] {34, 64}, pos.shape());
        assertEquals(2, pos.zeroRows());
        assertEquals(32 * 64, pos.sourceElements());
        JsonNode c = JSON.readTree(f.config());
        assertEquals("XLMRobertaModel", c.get("architectures").get(0).asText());
        assertEquals("xlm-roberta", c.get("model_type").asText());
        assertEquals(34, c.get("max_position_embeddings").asInt());
        assertEquals(1, c.get("pad_token_id").asInt());
        JsonNode tok = JSON.readTree(f.tokenizerJson());
        assertEquals("Unigram", tok.get("model").get("type").asText());
        assertEquals(3, tok.get("model").get("unk_id").asInt());
        assertEquals(-1.5, tok.get("model").get("vocab").get(4).get(1).asDouble());
        assertEquals(Base64.getEncoder().encodeToString(new byte[] {1, 2, -1}), tok.get("normalizer").get("precompiled_charsmap").asText());
        assertEquals("WhitespaceSplit", tok.get("pre_tokenizer").get("pretokenizers").get(0).get("type").asText());
        assertEquals("always", tok.get("pre_tokenizer").get("pretokenizers").get(1).get("prepend_scheme").asText());
        JsonNode pair = tok.get("post_processor").get("pair");   // <s> A </s> </s> B </s>
        assertEquals(6, pair.size());
        assertEquals("</s>", pair.get(3).get("SpecialToken").get("id").asText());
        assertTrue(JSON.readTree(f.sentenceTransformers().get("1_Pooling/config.json")).get("pooling_mode_cls_token").asBoolean());
        JsonNode tc = JSON.readTree(f.tokenizerConfig());
        assertEquals("<s>", tc.get("cls_token").asText());
        assertEquals("</s>", tc.get("sep_token").asText());
        assertFalse(tc.has("mask_token"), "an UNUSED placeholder is no mask token");
    }

    @Test
    void nomicBertSplitsTheFusedQkvIntoThirds() throws Exception {
        List<String> layer = List.of("blk.0.attn_qkv.weight:64,192:Q8_0", "blk.0.attn_output.weight:64,64",
                "blk.0.attn_output_norm.weight:64", "blk.0.attn_output_norm.bias:64", "blk.0.ffn_up.weight:64,128",
                "blk.0.ffn_gate.weight:64,128", "blk.0.ffn_down.weight:128,64", "blk.0.layer_output_norm.weight:64",
                "blk.0.layer_output_norm.bias:64");
        GgufFile g = encoder("nomic-bert", wordPiece(), layer, false, 1);
        HfFolder f = HfFolder.of(g);
        assertEquals(Architecture.NOMIC_BERT, f.arch());
        Map<String, HfTensor> t = byName(f);
        long third = g.tensor("blk.0.attn_qkv.weight").byteSize() / 3;
        String[] names = {"layers.0.self_attn.q_proj.weight", "layers.0.self_attn.k_proj.weight", "layers.0.self_attn.v_proj.weight"};
        for (int i = 0; i < 3; i++) {
            HfTensor x = t.get(names[i]);
            assertArrayEquals(new long[] {64, 64}, x.shape(), names[i]);
            assertEquals(i * third, x.byteOffset(), names[i]);
            assertEquals(third, x.byteLength(), names[i]);
            assertEquals(64, x.rows());
            assertNull(x.sourceRow());
        }
        assertTrue(t.containsKey("layers.0.mlp.gate_proj.weight"));
        assertTrue(t.containsKey("layers.0.post_mlp_layernorm.bias"));
        JsonNode c = JSON.readTree(f.config());
        assertEquals("NomicBertModel", c.get("architectures").get(0).asText());
        assertEquals("silu", c.get("hidden_act").asText());
        assertEquals(16, c.get("head_dim").asInt());
    }

    @Test
    void onlyMeanClsAndLastPoolingGetSentenceTransformersFiles() throws Exception {
        assertTrue(HfFolder.of(encoder("bert", wordPiece(), bertLayer(), true, 0)).sentenceTransformers().isEmpty(), "NONE");
        assertTrue(HfFolder.of(encoder("bert", wordPiece(), bertLayer(), true, 4)).sentenceTransformers().isEmpty(), "RANK");
        // a qwen3 GGUF with LAST pooling (qwen3-embedding) keeps its causal-LM folder and gains the files
        HfFolder q = HfFolder.of(HfFolderTest.model("qwen3", true, List.of("blk.0.attn_q_norm.weight:16", "blk.0.attn_k_norm.weight:16"),
                List.of(kv("qwen3.pooling_type", GgufValueType.UINT32, 3))));
        assertEquals(Architecture.QWEN3, q.arch());
        assertTrue(JSON.readTree(q.sentenceTransformers().get("1_Pooling/config.json")).get("pooling_mode_lasttoken").asBoolean());
        assertEquals(512, JSON.readTree(q.sentenceTransformers().get("sentence_bert_config.json")).get("max_seq_length").asInt());
        assertTrue(HfFolder.of(HfFolderTest.model("qwen3", true, List.of("blk.0.attn_q_norm.weight:16", "blk.0.attn_k_norm.weight:16"),
                List.of())).sentenceTransformers().isEmpty());
    }

    @Test
    void anEncoderWithoutTokenTypesOrWithAClassifierIsRefused() {
        GgufFile noTypes = encoder("bert", wordPiece(), bertLayer(), true, 1);
        List<GgufTensorInfo> ts = noTypes.tensors().stream().filter(t -> !t.name().equals("token_types.weight")).toList();
        HfUnsupported e = org.junit.jupiter.api.Assertions.assertThrows(HfUnsupported.class,
                () -> HfFolder.of(new GgufFile(3, 32, noTypes.kvs(), ts, 4096)));
        assertTrue(e.getMessage().contains("token_types"), e.getMessage());
        List<String> cls = new ArrayList<>(bertLayer());
        cls.add("cls.output.weight:64,2");
        HfUnsupported c = org.junit.jupiter.api.Assertions.assertThrows(HfUnsupported.class,
                () -> HfFolder.of(encoder("bert", wordPiece(), cls, true, 1)));
        assertTrue(c.getMessage().contains("cls.output.weight"), c.getMessage());
    }
}
