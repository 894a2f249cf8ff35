package dev.modelfs.tree;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.Segment;
import dev.modelfs.model.DiffusersModelIndex;
import dev.modelfs.model.ModelTable;
import dev.modelfs.model.ModelTables;
import dev.modelfs.model.SourceModes;
import dev.modelfs.model.MemoryBudget;
import dev.modelfs.store.Digest;
import dev.modelfs.store.Layer;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.MediaType.Kind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.logging.Logger;

/**
 * Builds the listing of one model directory (docs/DESIGN.md §1): {@code ollama/*}, the GGUF blobs, JSON
 * layers, per-tensor files, and whatever the registered {@link ModelView}s add.
 *
 * <p>Invariants: a pure function of the manifest and the blob headers; one bad layer loses only its
 * own files (logged once), never the model. Everything built counts against the model's
 * {@link MemoryBudget.Account}; a model over it is built again without its tables and views (its blobs and
 * {@code ollama/} files only, bounded by the manifest's size), with one log line naming the budget.
 */
public final class ModelDirectory {
    private static final Logger LOG = Logger.getLogger(ModelDirectory.class.getName());
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_TEXT = 16 << 20;

    private final List<ModelView> views;

    public ModelDirectory(List<ModelView> views) {
        this.views = List.copyOf(views);
    }

    public SortedMap<String, Node> build(ModelContext ctx) {
        return build(ctx, MemoryBudget.standard().account());
    }

    /** The model's directory, all of it within {@code budget} ({@link MemoryBudget}), which is cleared first. */
    public SortedMap<String, Node> build(ModelContext ctx, MemoryBudget.Account budget) {
        budget.clear();
        try {
            return build(ctx, budget, true);
        } catch (MemoryBudget.Exceeded e) {
            LOG.warning(ctx.manifest().name() + ": converted files left out: " + e.getMessage());
            budget.clear();
            return build(ctx, budget, false);
        }
    }

    private SortedMap<String, Node> build(ModelContext ctx, MemoryBudget.Account budget, boolean converted) {
        Manifest m = ctx.manifest();
        // directories are per model (two tags of one manifest must not share directory inodes);
        // files keep (manifest digest, path) identities, so identical files share an inode
        TreeBuilder tree = new TreeBuilder(m.digest().hex() + "@" + m.name().manifestPath(), ctx.mtimeNanos());
        tree.narrowFilesTo(SourceModes.ofModel(ctx.store(), m));      // never more readable than the sources
        if (converted) {
            tree.chargeTo(budget.asDirectoryCharge());
        }
        addOllamaFiles(ctx, tree);
        addGgufBlobs(ctx, tree);
        for (Layer l : m.layers()) {
            if (l.kind() == Kind.JSON) {
                if (l.name() == null) {
                    LOG.warning(m.name() + ": json layer without a name, skipped");
                } else if (l.name().equals(DiffusersModelIndex.NAME)) {
                    putModelIndex(ctx, tree, l);
                } else {
                    putBlob(ctx, tree, l.name(), l, "json layer");
                }
            } else if (l.kind() == Kind.TENSOR) {
                if (l.name() == null) {
                    LOG.warning(m.name() + ": tensor layer without a name, skipped");
                } else {
                    putBlob(ctx, tree, "tensors/" + l.name() + ".safetensors", l, "tensor layer");
                }
            } else if (l.kind() == Kind.UNKNOWN && l.digest().isPresent()) {
                putBlob(ctx, tree, "ollama/layers/" + l.digest().get().fileName(), l, l.mediaType().base());
            }
        }
        if (!converted) {
            return tree.build();
        }
        List<ModelTable> tables = tables(ctx, budget);
        for (ModelView v : views) {
            try {
                v.addTo(ctx, tables, tree);
            } catch (MemoryBudget.Exceeded e) {
                throw e;
            } catch (RuntimeException e) {
                LOG.warning(m.name() + ": " + v.getClass().getSimpleName() + " failed: " + e);
            }
        }
        return tree.build();
    }

    /** The model stage's tables of this model; none (logged) if building them failed unexpectedly. */
    private static List<ModelTable> tables(ModelContext ctx, MemoryBudget.Account budget) {
        try {
            return ModelTables.load(ctx.store(), ctx.manifest(), ctx.config(), budget);
        } catch (RuntimeException e) {
            LOG.warning(ctx.manifest().name() + ": tensor tables failed: " + e);
            return List.of();
        }
    }

    /** Places a file that is exactly one layer's blob. */
    static boolean putBlob(ModelContext ctx, TreeBuilder tree, String path, Layer l, String what) {
        if (l.digest().isEmpty()) {
            return false;
        }
        Digest d = l.digest().get();
        BlobRef ref = new BlobRef(d, l.size());
        FileNode f = new FileNode(Inodes.ofBlob(d.hex()), ctx.mtimeNanos(),
                ByteSource.of(new Segment.BlobSlice(ref, 0, l.size())),
                Map.of("user.modelfs.digest", d.toString(), "user.modelfs.source", what + " " + d));
        return tree.put(path, f);
    }

    /**
     * An image model's {@code model_index.json}: restored for diffusers ({@link DiffusersModelIndex}) when
     * Ollama rewrote it, else the stored bytes; one log line when it cannot be read or parsed.
     */
    private static void putModelIndex(ModelContext ctx, TreeBuilder tree, Layer l) {
        byte[] restored = null;
        if (l.digest().isPresent()) {
            try {
                restored = DiffusersModelIndex.restore(ctx.store().readSmallBlob(l.digest().get(), MAX_TEXT));
            } catch (IOException e) {
                LOG.warning(ctx.manifest().name() + ": model_index.json served as stored: " + e.getMessage());
            }
        }
        if (restored == null) {
            putBlob(ctx, tree, l.name(), l, "json layer");
        } else {
            putLiteral(ctx, tree, l.name(), restored, "json layer " + l.digest().get() + " restored for diffusers");
        }
    }

    private static void putLiteral(ModelContext ctx, TreeBuilder tree, String path, byte[] bytes, String what) {
        tree.put(path, new FileNode(ctx.inodeOf(path), ctx.mtimeNanos(), ByteSource.literal(bytes),
                Map.of("user.modelfs.source", what)));
    }

    private void addOllamaFiles(ModelContext ctx, TreeBuilder tree) {
        Manifest m = ctx.manifest();
        putLiteral(ctx, tree, "ollama/manifest.json", m.raw(), "manifest " + m.digest());
        if (m.config().digest().isPresent()) {
            putBlob(ctx, tree, "ollama/config.json", m.config(), "config blob");
        }
        Layer template = last(m, Kind.TEMPLATE);
        if (template == null) {
            template = last(m, Kind.PROMPT);
        }
        Map<Kind, String> single = new EnumMap<>(Kind.class);
        single.put(Kind.SYSTEM, "ollama/system");
        single.put(Kind.PARAMS, "ollama/params.json");
        single.put(Kind.MESSAGES, "ollama/messages.json");
        if (template != null) {
            putBlob(ctx, tree, "ollama/template", template, "template layer");
        }
        single.forEach((kind, path) -> {
            Layer l = last(m, kind);
            if (l != null) {
                putBlob(ctx, tree, path, l, kind.name().toLowerCase() + " layer");
            }
        });
        int n = 0;
        for (Layer l : m.layers(Kind.LICENSE)) {
            n++;
            putBlob(ctx, tree, n == 1 ? "ollama/license" : "ollama/license." + n, l, "license layer");
        }
        putLiteral(ctx, tree, "ollama/Modelfile", modelfile(ctx, template).getBytes(StandardCharsets.UTF_8),
                "rendered like ollama show --modelfile");
    }

    private static Layer last(Manifest m, Kind k) {
        List<Layer> ls = m.layers(k);
        return ls.isEmpty() ? null : ls.getLast();
    }

    private String modelfile(ModelContext ctx, Layer template) {
        Manifest m = ctx.manifest();
        ModelfileRenderer r = new ModelfileRenderer(m.name().displayShortest());
        Layer model = m.first(Kind.MODEL);
        if (model != null && model.digest().isPresent()) {
            r.from(ctx.store().canonicalBlobPath(model.digest().get()).toString());
        }
        for (Layer l : m.layers(Kind.ADAPTER)) {
            l.digest().ifPresent(d -> r.adapter(ctx.store().canonicalBlobPath(d).toString()));
        }
        for (Layer l : m.layers(Kind.DRAFT)) {
            l.digest().ifPresent(d -> r.draft(ctx.store().canonicalBlobPath(d).toString()));
        }
        for (Layer l : m.layers(Kind.PROJECTOR)) {
            l.digest().ifPresent(d -> r.projector(ctx.store().canonicalBlobPath(d).toString()));
        }
        if (template != null) {
            String t = text(ctx, template);
            if (t != null) {
                r.template(t);
            }
        }
        Layer system = last(m, Kind.SYSTEM);
        if (system != null) {
            r.system(text(ctx, system));
        }
        Layer params = last(m, Kind.PARAMS);
        if (params != null) {
            r.params(json(ctx, params));
        }
        for (Layer l : m.layers(Kind.LICENSE)) {
            String t = text(ctx, l);
            if (t != null) {
                r.license(t);
            }
        }
        Layer messages = last(m, Kind.MESSAGES);
        if (messages != null) {
            r.messages(json(ctx, messages));
        }
        return r.render();
    }

    private static String text(ModelContext ctx, Layer l) {
        byte[] b = bytes(ctx, l);
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    private static JsonNode json(ModelContext ctx, Layer l) {
        byte[] b = bytes(ctx, l);
        if (b == null) {
            return null;
        }
        try {
            return JSON.readTree(b);
        } catch (IOException e) {
            LOG.warning(ctx.manifest().name() + ": " + l.kind() + " layer is not valid JSON, left out of the Modelfile");
            return null;
        }
    }

    private static byte[] bytes(ModelContext ctx, Layer l) {
        if (l.digest().isEmpty()) {
            return null;
        }
        try {
            return ctx.store().readSmallBlob(l.digest().get(), MAX_TEXT);
        } catch (IOException e) {
            LOG.warning(ctx.manifest().name() + ": cannot read " + l.kind() + " layer " + l.digest().get().shortId()
                    + ": " + e.getMessage());
            return null;
        }
    }

    private static void addGgufBlobs(ModelContext ctx, TreeBuilder tree) {
        Map<Kind, String> names = new EnumMap<>(Kind.class);
        names.put(Kind.MODEL, "model");
        names.put(Kind.PROJECTOR, "mmproj");
        names.put(Kind.ADAPTER, "adapter");
        names.put(Kind.DRAFT, "draft");
        names.forEach((kind, base) -> {
            int n = 0;
            for (Layer l : ctx.manifest().layers(kind)) {
                n++;
                putBlob(ctx, tree, n == 1 ? base + ".gguf" : base + "-" + n + ".gguf", l, kind.name().toLowerCase() + " layer");
            }
        });
        Layer draft = ctx.manifest().first(Kind.DRAFT);
        if (draft != null) {   // the draft's model folder (docs/FORMATS.md §4.3 H), beside its converted files
            putBlob(ctx, tree, ModelTables.DRAFT_FOLDER + "/model.gguf", draft, "draft layer");
        }
    }
}
