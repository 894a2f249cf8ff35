package dev.modelfs.view.dialect;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.dialect.Dialects;
import dev.modelfs.dialect.Outcome;
import dev.modelfs.dialect.TranslatedGguf;
import dev.modelfs.dialect.Translation;
import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.model.BlobHeaders;
import dev.modelfs.model.ModelTable;
import dev.modelfs.store.Layer;
import dev.modelfs.store.MediaType;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.ModelContext;
import dev.modelfs.tree.ModelView;
import dev.modelfs.tree.TreeBuilder;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.logging.Logger;

/**
 * The files of a model stored in Ollama's GGUF dialect (docs/SEMANTICS.md "Ollama's GGUF dialect", FORMATS.md §12):
 * {@code model.gguf} becomes the text-facing translation of the model layer, the stored blob moves to
 * {@code ollama/model.gguf} (byte for byte, its digest xattr kept), and a vision tower embedded in the model
 * layer is served as {@code mmproj.gguf} (unless a projector layer holds that name). A projector layer that
 * needs a translation of its own (no {@code clip.projector_type}) is served translated as {@code mmproj.gguf},
 * its blob as {@code ollama/mmproj.gguf}.
 *
 * <p>Invariants: a model no handler matches keeps its tree unchanged; a matched text header that contradicts
 * itself leaves the blob as {@code model.gguf} with one log line and gets no {@code mmproj.gguf} from that layer;
 * no tensor data is read while building.
 */
public final class DialectView implements ModelView {
    private static final Logger LOG = Logger.getLogger(DialectView.class.getName());
    /** Where the stored model layer goes when {@code model.gguf} is its translation. */
    public static final String RAW_MODEL = "ollama/model.gguf";
    /** Where a translated projector layer's stored blob goes. */
    public static final String RAW_PROJECTOR = "ollama/mmproj.gguf";

    @Override
    public void addTo(ModelContext ctx, List<ModelTable> tables, TreeBuilder tree) {
        for (ModelTable t : tables) {
            if (t instanceof ModelTable.Gguf g && g.folder().isEmpty()) {
                model(ctx, g, tree);
            }
        }
        Layer projector = ctx.manifest().first(MediaType.Kind.PROJECTOR);
        if (projector != null && projector.digest().isPresent()) {
            projector(ctx, projector, tree);
        }
    }

    private static void model(ModelContext ctx, ModelTable.Gguf g, TreeBuilder tree) {
        BlobRef blob = new BlobRef(g.layer().digest().get(), g.layer().size());
        List<Outcome> faces = outcomes(g.file());
        switch (faces.getFirst()) {
            case Outcome.Translated t -> replace(ctx, tree, "model.gguf", RAW_MODEL, t.translation(), blob);
            case Outcome.Refused r -> {
                LOG.warning(ctx.manifest().name() + ": model.gguf served as stored, no mmproj.gguf from it: " + r.handler()
                        + " markers matched but " + r.reason());
                return;
            }
            case Outcome.NoUpstream n -> LOG.info(ctx.manifest().name() + ": " + n.reason());
            case Outcome.Untouched _ -> { }
        }
        switch (faces.get(1)) {
            case Outcome.Translated t -> place(ctx, tree, "mmproj.gguf", t.translation(), blob);
            case Outcome.Refused r -> LOG.warning(ctx.manifest().name() + ": no mmproj.gguf from the model layer: " + r.handler()
                    + " markers matched but " + r.reason());
            default -> { }
        }
    }

    /**
     * The outcomes of a model layer's text face ({@code model.gguf}) and clip face ({@code mmproj.gguf}), as the
     * tree gets them and {@code modelfs show} reports them: a text header that contradicts itself refuses the clip
     * face too, so no half-translated file comes from it.
     */
    public static List<Outcome> outcomes(GgufFile g) {
        Outcome text = Dialects.text(g);
        return List.of(text, text instanceof Outcome.Refused r ? r : Dialects.clip(g));
    }

    private static void projector(ModelContext ctx, Layer layer, TreeBuilder tree) {
        GgufFile g;
        try {
            g = new BlobHeaders(ctx.store()).gguf(layer.digest().get(), layer.size());
        } catch (IOException | FormatException e) {
            return;   // the stored projector stays as mmproj.gguf; its own readers report what is wrong with it
        }
        switch (Dialects.clip(g)) {
            case Outcome.Translated t -> replace(ctx, tree, "mmproj.gguf", RAW_PROJECTOR, t.translation(),
                    new BlobRef(layer.digest().get(), layer.size()));
            case Outcome.Refused r -> LOG.warning(ctx.manifest().name() + ": mmproj.gguf served as stored: " + r.handler()
                    + " markers matched but " + r.reason());
            default -> { }
        }
    }

    /** The translation at {@code path}, the stored blob that was there moved to {@code rawPath}. */
    private static void replace(ModelContext ctx, TreeBuilder tree, String path, String rawPath, Translation t, BlobRef blob) {
        FileNode translated = node(ctx, path, t, blob);
        if (translated == null) {
            return;
        }
        FileNode stored = tree.replace(path, translated);
        if (stored != null) {
            tree.put(rawPath, stored);
        }
    }

    /** The translation at {@code path}, unless a layer already holds that name (a projector layer keeps {@code mmproj.gguf}). */
    private static void place(ModelContext ctx, TreeBuilder tree, String path, Translation t, BlobRef blob) {
        if (tree.files().containsKey(path)) {
            return;
        }
        FileNode f = node(ctx, path, t, blob);
        if (f != null) {
            tree.put(path, f);
        }
    }

    private static FileNode node(ModelContext ctx, String path, Translation t, BlobRef blob) {
        try {
            ByteSource src = TranslatedGguf.assemble(t, blob);
            return new FileNode(ctx.inodeOf(path), ctx.mtimeNanos(), src, Map.of("user.modelfs.source",
                    "translated from Ollama's GGUF dialect (" + t.handler() + ") of " + blob.digest()));
        } catch (FormatException | IllegalArgumentException | IllegalStateException | ArithmeticException e) {
            LOG.warning(ctx.manifest().name() + ": " + path + " served as stored: " + t.handler() + " translation failed: " + e.getMessage());
            return null;
        }
    }
}
