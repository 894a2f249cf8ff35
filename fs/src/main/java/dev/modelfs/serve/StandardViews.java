package dev.modelfs.serve;

import dev.modelfs.tree.ModelView;
import dev.modelfs.view.VariantFolders;
import dev.modelfs.view.dialect.DialectView;
import dev.modelfs.view.diffusers.TokenizerVocabFiles;
import dev.modelfs.view.gguf.GgufModelView;
import dev.modelfs.view.safetensors.SafetensorsModelView;
import dev.modelfs.view.synth.SynthesizedGgufView;
import java.util.List;

/**
 * The synthesized-file families every mount and NFS server shows, in the order they are added to a
 * model directory (the order decides who wins a name; {@link VariantFolders} completes the variant
 * folders last). The front ends and the CLI reach the views only through this list and {@link ModelPlans}.
 */
public final class StandardViews {
    private StandardViews() {}

    public static List<ModelView> all() {
        return List.of(new DialectView(), new GgufModelView(), new SafetensorsModelView(), new SynthesizedGgufView(), new TokenizerVocabFiles(),
                new VariantFolders());
    }
}
