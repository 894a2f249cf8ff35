package dev.modelfs.view.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.bytes.Segment;
import dev.modelfs.dialect.TinyGguf;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.view.VectorStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GGUF model view over the {@code tiny-llama.gguf} vector in a store: the GGUF variants, and a
 * Hugging Face config whose numbers are the GGUF's keys as the vector's JSON (made by gguf-py) lists them.
 */
class GgufModelViewTest {
    @TempDir
    Path root;

    @Test
    void variantsAndAHuggingFaceConfig() throws IOException {
        DirNode dir = VectorStore.tinyLlama(root, List.of(new GgufModelView()));
        for (String f : new String[] {"model.fp32.gguf", "model.fp16.gguf", "model.bf16.gguf", "config.json", "tokenizer.json"}) {
            assertInstanceOf(FileNode.class, dir.child(f), f + " in " + dir.children().keySet());
        }
        FileNode config = (FileNode) dir.child("config.json");
        assertInstanceOf(Segment.Literal.class, config.source().segment(0));
        JsonNode c = new ObjectMapper().readTree(((Segment.Literal) config.source().segment(0)).bytes());
        // tiny-llama.gguf.json: llama.embedding_length 32, feed_forward_length 64, head_count 2, head_count_kv 1, vocab 8
        assertEquals(32, c.get("hidden_size").asInt());
        assertEquals(64, c.get("intermediate_size").asInt());
        assertEquals(2, c.get("num_attention_heads").asInt());
        assertEquals(1, c.get("num_key_value_heads").asInt());
        assertEquals(8, c.get("vocab_size").asInt());
        assertEquals(1e-5, c.get("rms_norm_eps").asDouble(), 1e-12);
        assertTrue(((FileNode) dir.child("model.fp32.gguf")).size() > ((FileNode) dir.child("model.fp16.gguf")).size(),
                "F32 tensors take more bytes than F16");
    }

    /**
     * A model in Ollama's mistral3 dialect (its own rope keys mark it; pre-tokenizer "default", which the translation
     * names tekken): the folder is built from the translated header, and tokenizer.json, rebuilt from the blob when read,
     * must be too (from the stored header its size differed and every read failed).
     */
    @Test
    void aTranslatedModelsTokenizerJsonIsRebuiltFromTheTranslatedHeader() throws IOException {
        List<Object> tokens = List.of("a", "b", "c", "ab", "abc", "\u0120", "<s>", "</s>");
        TinyGguf g = new TinyGguf().str("general.architecture", "mistral3").u32("mistral3.block_count", 1)
                .u32("mistral3.context_length", 64).u32("mistral3.embedding_length", 16).u32("mistral3.feed_forward_length", 32)
                .u32("mistral3.attention.head_count", 2).u32("mistral3.attention.head_count_kv", 2)
                .f32("mistral3.attention.layer_norm_rms_epsilon", 1e-5f).f32("mistral3.rope.freq_base", 1e6f)
                .f32("mistral3.rope.scaling.beta_fast", 32f).f32("mistral3.rope.scaling.beta_slow", 1f)
                .f32("mistral3.rope.scaling.mscale_all_dim", 1f).f32("mistral3.rope.scaling_beta", 0.1f)
                .str("mistral3.rope.scaling.type", "yarn").f32("mistral3.rope.scaling.factor", 4f)
                .u32("mistral3.rope.scaling.original_context_length", 16)
                .str("tokenizer.ggml.model", "gpt2").str("tokenizer.ggml.pre", "default")
                .kv("tokenizer.ggml.tokens", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, tokens))
                .kv("tokenizer.ggml.token_type", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32,
                        List.of(1, 1, 1, 1, 1, 1, 3, 3)))
                .kv("tokenizer.ggml.merges", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, List.of("a b", "ab c")))
                .u32("tokenizer.ggml.bos_token_id", 6).u32("tokenizer.ggml.eos_token_id", 7)
                .tensor("token_embd.weight", GgmlType.F16, 16, 8).tensor("output_norm.weight", GgmlType.F32, 16);
        for (String[] t : new String[][] {{"attn_norm", "16"}, {"ffn_norm", "16"}}) {
            g.tensor("blk.0." + t[0] + ".weight", GgmlType.F32, 16);
        }
        for (String t : List.of("attn_q", "attn_k", "attn_v", "attn_output")) {
            g.tensor("blk.0." + t + ".weight", GgmlType.F16, 16, 16);
        }
        g.tensor("blk.0.ffn_gate.weight", GgmlType.F16, 16, 32).tensor("blk.0.ffn_up.weight", GgmlType.F16, 16, 32)
                .tensor("blk.0.ffn_down.weight", GgmlType.F16, 32, 16);
        DirNode dir = VectorStore.model(root, "m3", "{\"model_format\":\"gguf\",\"model_family\":\"mistral3\"}",
                List.of(new VectorStore.Layer("application/vnd.ollama.image.model", g.bytes(), null)), List.of(new GgufModelView()));
        FileNode tok = assertInstanceOf(FileNode.class, dir.child("tokenizer.json"), () -> "no tokenizer.json in " + dir.children().keySet());
        JsonNode t = new ObjectMapper().readTree(new String(VectorStore.read(root, tok), StandardCharsets.UTF_8));
        assertTrue(t.at("/pre_tokenizer/pretokenizers/0/pattern/Regex").asText().contains("\\p{Lu}"),
                "the translated header's pre-tokenizer (tekken), not the stored default: " + t.get("pre_tokenizer"));
        assertEquals("Ministral3ForCausalLM", new ObjectMapper().readTree(((Segment.Literal) ((FileNode) dir.child("config.json"))
                .source().segment(0)).bytes()).at("/architectures/0").asText());
    }
}
