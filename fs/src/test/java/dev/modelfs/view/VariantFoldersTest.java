package dev.modelfs.view;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.modelfs.bytes.ByteSource;
import dev.modelfs.store.ManifestParser;
import dev.modelfs.store.ModelName;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.ModelContext;
import dev.modelfs.tree.TreeBuilder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which files a variant folder gets beside the weights the other views placed there (SEMANTICS.md "One weight set per folder"). */
class VariantFoldersTest {
    private static FileNode file(long inode, String text, boolean blob) {
        return new FileNode(inode, 0, ByteSource.literal(text.getBytes(StandardCharsets.UTF_8)),
                blob ? Map.of("user.modelfs.digest", "sha256:" + "a".repeat(64)) : Map.of());
    }

    @Test
    void copiesConfigsTokenizerAndIndexIntoTheVariantFoldersThatExistAndNothingElse() {
        ModelContext ctx = new ModelContext(null, ManifestParser.parse(ModelName.parse("t").orElseThrow(),
                "{\"layers\":[]}".getBytes(StandardCharsets.UTF_8)), null, 0);
        TreeBuilder tree = new TreeBuilder("t", 0);
        FileNode index = file(1, "{}", false);
        FileNode tokenizer = file(2, "{\"model\":{}}", true);
        tree.put("model_index.json", index);
        tree.put("tokenizer/tokenizer.json", tokenizer);
        tree.put("scheduler/scheduler_config.json", file(3, "{}", true));
        tree.put("transformer/config.json", file(4, "{}", true));
        for (String other : List.of("ollama/manifest.json", "tensors/a.safetensors", "gguf/model.safetensors",
                "transformer/diffusion_pytorch_model.safetensors", "model.gguf", "model.bf16.gguf")) {
            tree.put(other, file(5, "x", false));
        }
        tree.put("bf16/transformer/diffusion_pytorch_model.safetensors", file(6, "w", false));
        tree.put("fp32/transformer/diffusion_pytorch_model.safetensors", file(7, "w", false));
        new VariantFolders().addTo(ctx, List.of(), tree);
        Map<String, FileNode> files = tree.files();
        for (String v : List.of("bf16", "fp32")) {
            Set<String> got = files.keySet().stream().filter(p -> p.startsWith(v + "/")).collect(java.util.stream.Collectors.toSet());
            assertEquals(Set.of(v + "/model_index.json", v + "/tokenizer/tokenizer.json", v + "/scheduler/scheduler_config.json",
                    v + "/transformer/config.json", v + "/transformer/diffusion_pytorch_model.safetensors"), got);
            assertSame(tokenizer, files.get(v + "/tokenizer/tokenizer.json"), "a blob file keeps its node and inode");
            assertNotEquals(index.inode(), files.get(v + "/model_index.json").inode(), "a synthesized copy has its own path's inode");
            assertSame(index.source(), files.get(v + "/model_index.json").source());
        }
        assertEquals(0, files.keySet().stream().filter(p -> p.startsWith("fp16/")).count(), "no fp16/ folder was created by a view");
    }

    @Test
    void aConfigThatNamesADtypeSaysEachFoldersOwn() throws Exception {
        ModelContext ctx = new ModelContext(null, ManifestParser.parse(ModelName.parse("t").orElseThrow(),
                "{\"layers\":[]}".getBytes(StandardCharsets.UTF_8)), null, 0);
        TreeBuilder tree = new TreeBuilder("t", 0);
        FileNode config = file(1, "{\"torch_dtype\":\"float16\",\"hidden_size\":8,\"text_config\":{\"dtype\":\"float16\"},"
                + "\"quantization_config\":{\"dtype\":\"int4\"}}", false);
        tree.put("config.json", config);
        tree.put("vae/config.json", file(2, "{\"in_channels\":3}", true));
        for (String v : List.of("fp32", "fp16", "bf16")) {
            tree.put(v + "/model.safetensors", file(3, "w", false));
        }
        new VariantFolders().addTo(ctx, List.of(), tree);
        Map<String, FileNode> files = tree.files();
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        for (String[] v : new String[][] {{"fp32", "float32"}, {"bf16", "bfloat16"}}) {
            com.fasterxml.jackson.databind.JsonNode c = json.readTree(((dev.modelfs.bytes.Segment.Literal)
                    files.get(v[0] + "/config.json").source().segment(0)).bytes());
            assertEquals(v[1], c.get("torch_dtype").asText(), v[0]);
            assertEquals(v[1], c.get("text_config").get("dtype").asText(), v[0]);
            assertEquals("int4", c.get("quantization_config").get("dtype").asText(), "a quantization section is left alone");
            assertEquals(8, c.get("hidden_size").asInt());
            assertNotEquals(config.inode(), files.get(v[0] + "/config.json").inode());
        }
        assertSame(config.source(), files.get("fp16/config.json").source(), "already its folder's dtype: copied unchanged");
        assertSame(files.get("vae/config.json"), files.get("bf16/vae/config.json"), "no dtype named: the blob's node, unchanged");
        assertSame(config, files.get("config.json"), "the model directory's own config is the stored one");
    }
}
