package dev.modelfs.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.tree.DirNode;
import dev.modelfs.view.VectorStore;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The families every mount shows, in the order that decides who wins a name, and what they add to a GGUF model. */
class StandardViewsTest {
    @TempDir
    Path root;

    @Test
    void theFamiliesInTheirOrder() {
        assertEquals(List.of("DialectView", "GgufModelView", "SafetensorsModelView", "SynthesizedGgufView", "TokenizerVocabFiles", "VariantFolders"),
                StandardViews.all().stream().map(v -> v.getClass().getSimpleName()).toList());
    }

    @Test
    void aGgufModelGetsItsConvertedFilesOnlyFromTheViews() throws IOException {
        Set<String> bare = VectorStore.tinyLlama(root.resolve("a"), List.of()).children().keySet();
        DirNode all = VectorStore.tinyLlama(root.resolve("b"), StandardViews.all());
        assertTrue(bare.contains("model.gguf"), "the original file needs no view: " + bare);
        for (String f : new String[] {"model.fp32.gguf", "model.fp16.gguf", "model.bf16.gguf"}) {
            assertTrue(!bare.contains(f) && all.children().containsKey(f), f + " comes from a view: " + all.children().keySet());
        }
    }
}
