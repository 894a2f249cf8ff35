package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.model.ModelTable;
import dev.modelfs.model.ModelTables;
import dev.modelfs.serve.ModelPlans;
import dev.modelfs.serve.StandardViews;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.ManifestParser;
import dev.modelfs.store.ManifestRef;
import dev.modelfs.store.ModelConfig;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.synth.SynthesizedGgufPlanner;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.ModelDirectory;
import dev.modelfs.tree.StoreTree;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code serve.ModelPlans} tells {@code modelfs show} agrees with what the standard views put in
 * the tree, over the demo store: demo-llama (a llama GGUF) has a LlamaForCausalLM folder, and
 * demo-st:int4 (a one-layer llama in safetensors) one planned llama model.gguf with a tensor per
 * DemoStore weight.
 */
class ModelPlansTest {
    @TempDir
    Path dir;
    OllamaStore store;
    DirNode root;

    @BeforeEach
    void demo() throws IOException {
        new DemoStore(dir).write();
        store = new OllamaStore(dir);
        StoreTree tree = new StoreTree(store, new ModelDirectory(StandardViews.all()));
        tree.refresh();
        root = tree.root();
    }

    List<ModelTable> tables(String name) throws IOException {
        Manifest m = manifest(name);
        return ModelTables.load(store, m, ModelConfig.read(store, m));
    }

    Manifest manifest(String name) throws IOException {
        for (ManifestRef ref : store.listManifests()) {
            if (ref.name().toString().contains(name)) {
                return ManifestParser.parse(ref.name(), store.readManifest(ref));
            }
        }
        throw new AssertionError(name);
    }

    @Test
    void theGgufModelsFolderIsTheOneTheTreeShows() throws IOException {
        ModelTable.Gguf g = (ModelTable.Gguf) tables("demo-llama").getFirst();
        assertEquals("LlamaForCausalLM", ModelPlans.hfFolder(store, manifest("demo-llama"), g).arch().hfArchitecture());
        assertTrue(((DirNode) root.child("demo-llama")).children().containsKey("config.json"), "the view shows the folder too");
    }

    @Test
    void theSafetensorsModelsPlanNamesEveryTensor() throws IOException {
        ModelTable.Safetensors s = (ModelTable.Safetensors) tables("demo-st").stream()
                .filter(t -> t instanceof ModelTable.Safetensors).findFirst().orElseThrow();
        List<SynthesizedGgufPlanner.Result> plans = ModelPlans.synthesizedGguf(store, manifest("demo-st"), s);
        assertEquals(1, plans.size());
        SynthesizedGgufPlanner.Result.Planned p = (SynthesizedGgufPlanner.Result.Planned) plans.getFirst();
        assertEquals("llama", p.plan().architecture().ggufName());
        // DemoStore's safetensors llama: embeddings, two norms per layer, seven projections, the final norm (tied output)
        assertEquals(11, p.plan().tensors().size());
        assertTrue(p.plan().tensors().stream().anyMatch(t -> t.ggufName().equals("blk.0.attn_q.weight")));
        assertTrue(((DirNode) root.child("demo-st:int4")).children().containsKey("model.gguf"), "the view built the planned file");
    }
}
