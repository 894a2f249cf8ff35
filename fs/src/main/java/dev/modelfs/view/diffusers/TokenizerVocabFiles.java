package dev.modelfs.view.diffusers;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.Segment;
import dev.modelfs.convert.RebuiltFile;
import dev.modelfs.hf.BpeVocabFiles;
import dev.modelfs.model.DiffusersModelIndex;
import dev.modelfs.hf.HfUnsupported;
import dev.modelfs.model.ModelTable;
import dev.modelfs.store.Layer;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.MediaType;
import dev.modelfs.tree.ModelContext;
import dev.modelfs.tree.ModelView;
import dev.modelfs.tree.TreeBuilder;
import dev.modelfs.tree.ViewFiles;
import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.logging.Logger;

/**
 * Completes the tokenizer folders of image models (docs/SEMANTICS.md "Image models"): Ollama's image
 * importer stored {@code tokenizer/tokenizer.json} but never {@code merges.txt} (and {@code vocab.json}
 * only when the source had one), which the slow tokenizer classes diffusers pipelines name in
 * {@code model_index.json} ({@code Qwen2Tokenizer}, {@code CLIPTokenizer} …) need with transformers 4.
 * For every JSON layer {@code <folder>/tokenizer.json} of a model with a {@code model_index.json}, this
 * adds {@code <folder>/vocab.json} and {@code <folder>/merges.txt} where no layer of that name exists,
 * rebuilt from the BPE model ({@link BpeVocabFiles}) when a file is read ({@link RebuiltFile}).
 *
 * <p>Invariants: reads the tokenizer.json layer (at most 64 MiB) once while building to learn the
 * sizes; a tokenizer.json that is not a BPE model, or cannot be read, adds nothing (one log line).
 */
public final class TokenizerVocabFiles implements ModelView {
    private static final Logger LOG = Logger.getLogger(TokenizerVocabFiles.class.getName());
    private static final int MAX_JSON = 64 << 20;
    private static final String TOKENIZER = "/tokenizer.json";

    @Override
    public void addTo(ModelContext ctx, List<ModelTable> tables, TreeBuilder tree) {
        Manifest m = ctx.manifest();
        Set<String> stored = new HashSet<>();
        for (Layer l : m.layers(MediaType.Kind.JSON)) {
            if (l.name() != null) {
                stored.add(l.name());
            }
        }
        if (!stored.contains(DiffusersModelIndex.NAME)) {
            return;
        }
        for (Layer l : m.layers(MediaType.Kind.JSON)) {
            String name = l.name();
            if (name == null || l.digest().isEmpty() || !name.endsWith(TOKENIZER) || name.indexOf('/') != name.length() - TOKENIZER.length()) {
                continue;
            }
            String folder = name.substring(0, name.length() - TOKENIZER.length() + 1);
            try {
                JsonNode bpe = BpeVocabFiles.bpeModel(ctx.store().readSmallBlob(l.digest().get(), MAX_JSON));
                BlobRef blob = new BlobRef(l.digest().get(), l.size());
                add(ctx, tree, stored, folder + "vocab.json", blob, BpeVocabFiles.vocabJson(bpe).length, BpeVocabFiles::vocabJson);
                add(ctx, tree, stored, folder + "merges.txt", blob, BpeVocabFiles.mergesTxt(bpe).length, BpeVocabFiles::mergesTxt);
            } catch (IOException | HfUnsupported e) {
                LOG.warning(m.name() + ": no vocab.json/merges.txt beside " + name + ": " + e.getMessage());
            }
        }
    }

    private static void add(ModelContext ctx, TreeBuilder tree, Set<String> stored, String path, BlobRef blob, int length,
                            Function<JsonNode, byte[]> build) {
        if (stored.contains(path)) {
            return;
        }
        String what = path.substring(path.lastIndexOf('/') + 1) + " rebuilt from tokenizer.json " + blob.digest();
        ViewFiles.put(ctx, tree, path, ByteSource.of(new Segment.Converted(new RebuiltFile(blob, length,
                bytes -> build.apply(BpeVocabFiles.bpeModel(bytes.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))), what))), what);
    }
}
