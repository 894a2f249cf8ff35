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
}
