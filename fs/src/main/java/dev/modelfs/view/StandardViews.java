package dev.modelfs.view;

import dev.modelfs.tree.ModelView;
import dev.modelfs.view.diffusers.TokenizerVocabFiles;
import dev.modelfs.view.gguf.GgufModelView;
import dev.modelfs.view.safetensors.SafetensorsModelView;
import dev.modelfs.view.synth.SynthesizedGgufView;
import java.util.List;

/** The synthesized-file families every mount shows, in the order they are added to a model directory. */
public final class StandardViews {
    private StandardViews() {}

    public static List<ModelView> all() {
        return List.of(new GgufModelView(), new SafetensorsModelView(), new SynthesizedGgufView(), new TokenizerVocabFiles(),
                new VariantFolders());
    }
}
