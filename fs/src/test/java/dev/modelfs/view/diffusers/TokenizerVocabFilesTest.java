package dev.modelfs.view.diffusers;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.view.VectorStore;
import dev.modelfs.view.VectorStore.Layer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * vocab.json and merges.txt beside an image model's tokenizer.json: the BPE model's vocabulary and
 * merges in transformers' file formats (merges.txt: a {@code #version: 0.2} line, then one merge a line),
 * added only where no layer of that name exists and only to models with a model_index.json.
 */
class TokenizerVocabFilesTest {
    static final String JSON = "application/vnd.ollama.image.json";
    static final String TOKENIZER = "{\"version\":\"1.0\",\"added_tokens\":[],\"model\":{\"type\":\"BPE\",\"vocab\":"
            + "{\"a\":0,\"b\":1,\"ab\":2,\"c\":3,\"abc\":4},\"merges\":[\"a b\",\"ab c\"]}}";

    @TempDir
    Path root;

    DirNode model(String name, boolean withIndex, Layer... more) throws IOException {
        List<Layer> layers = new java.util.ArrayList<>(List.of(
                new Layer(JSON, TOKENIZER.getBytes(StandardCharsets.UTF_8), "tokenizer/tokenizer.json")));
        if (withIndex) {
            layers.add(new Layer(JSON, "{\"_class_name\":\"DemoPipeline\"}".getBytes(StandardCharsets.UTF_8), "model_index.json"));
        }
        layers.addAll(List.of(more));
        return VectorStore.model(root, name, "{\"model_format\":\"safetensors\"}", layers, List.of(new TokenizerVocabFiles()));
    }

    @Test
    void vocabAndMergesRebuiltFromTheBpeModel() throws IOException {
        DirNode tok = (DirNode) model("img", true).child("tokenizer");
        JsonNode vocab = new ObjectMapper().readTree(VectorStore.read(root, (FileNode) tok.child("vocab.json")));
        assertEquals(new ObjectMapper().readTree(TOKENIZER).get("model").get("vocab"), vocab);
        assertEquals("#version: 0.2\na b\nab c\n",
                new String(VectorStore.read(root, (FileNode) tok.child("merges.txt")), StandardCharsets.UTF_8));
    }

    @Test
    void storedFilesWinAndModelsWithoutAnIndexGetNone() throws IOException {
        byte[] stored = "{\"stored\":0}".getBytes(StandardCharsets.UTF_8);
        DirNode tok = (DirNode) model("img", true, new Layer(JSON, stored, "tokenizer/vocab.json")).child("tokenizer");
        assertArrayEquals(stored, VectorStore.read(root, (FileNode) tok.child("vocab.json")));
        DirNode plain = (DirNode) model("text", false).child("tokenizer");
        assertNull(plain.child("merges.txt"));
        assertNull(plain.child("vocab.json"));
    }
}
