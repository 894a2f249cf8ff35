package dev.modelfs.serve;

import dev.modelfs.dialect.Outcome;
import dev.modelfs.hf.HfFolder;
import dev.modelfs.model.ModelTable;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.synth.SynthesizedGgufPlanner;
import dev.modelfs.view.dialect.DialectView;
import dev.modelfs.view.gguf.GgufModelView;
import dev.modelfs.view.synth.SynthesizedGgufView;
import java.util.List;

/**
 * What the {@link StandardViews} plan for one model, as data and without building a file, for
 * {@code modelfs show}: the Hugging Face folder of a GGUF model and the synthesized GGUF of each LLM
 * component of a safetensors model. The answers are the views' own (the same calls they build the
 * tree with), so {@code show} and the mounted tree cannot disagree.
 */
public final class ModelPlans {
    private ModelPlans() {}

    /**
     * The Hugging Face folder {@code GgufModelView} shows for a GGUF model of manifest {@code m} (reads the
     * small {@code rope_freqs.weight} from the blob when there is one, and the template layer).
     *
     * @throws dev.modelfs.hf.HfUnsupported (or a {@link dev.modelfs.format.FormatException},
     *         {@link IllegalArgumentException}, {@link ArithmeticException}) saying why the model has none
     */
    public static HfFolder hfFolder(OllamaStore store, Manifest m, ModelTable.Gguf model) {
        return GgufModelView.hfFolderOf(store, m, model);
    }

    /** The synthesized-GGUF plan or refusal of every LLM component of a safetensors model, as {@code SynthesizedGgufView} makes them. */
    public static List<SynthesizedGgufPlanner.Result> synthesizedGguf(OllamaStore store, Manifest m, ModelTable.Safetensors model) {
        return SynthesizedGgufView.plans(store, m, model);
    }

    /**
     * The translation {@code DialectView} gives a GGUF model layer's {@code model.gguf} (docs/SEMANTICS.md
     * "Ollama's GGUF dialect"), and the clip-facing one ({@code mmproj.gguf}) when the layer embeds a vision tower (refused with
     * the text face when the text header contradicts itself).
     */
    public static List<Outcome> dialect(ModelTable.Gguf model) {
        return DialectView.outcomes(model.file());
    }
}
