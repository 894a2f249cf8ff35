package dev.modelfs.view.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.bytes.Segment;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.view.VectorStore;
import java.io.IOException;
import java.nio.file.Path;
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
}
