package dev.modelfs.view.gguf;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.FileAssembly;
import dev.modelfs.bytes.Segment;
import dev.modelfs.convert.OutputType;
import dev.modelfs.convert.UnitConverted;
import dev.modelfs.dialect.Dialects;
import dev.modelfs.dialect.Outcome;
import dev.modelfs.dialect.TensorOp;
import dev.modelfs.dialect.TranslatedGguf;
import dev.modelfs.format.ElementTypes;
import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.format.gguf.GgufWriter;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.format.safetensors.SafetensorsWriter;
import dev.modelfs.hf.HfFolder;
import dev.modelfs.hf.HfUnsupported;
import dev.modelfs.model.ModelTable;
import dev.modelfs.quant.ggml.GgmlDequantizers;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import dev.modelfs.tree.ModelContext;
import dev.modelfs.tree.ModelView;
import dev.modelfs.tree.TreeBuilder;
import dev.modelfs.tree.ViewFiles;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * Converted files of GGUF-based models (docs/DESIGN.md §1): {@code model.safetensors} (GGUF names,
 * floats and integers as stored, quantized types as F32), {@code {fp32,fp16,bf16}/model.safetensors}
 * (every float tensor in that dtype; under {@code gguf/} when the model has a Hugging Face folder) and {@code model.{fp32,fp16,bf16}.gguf} (same metadata and tensor order, quantized tensors
 * dequantized, {@code general.file_type} updated; unquantized tensors and every other KV are
 * byte-for-byte slices of the source). A GGUF draft layer gets the same files in {@code draft/}.
 */
public final class GgufModelView implements ModelView {
    private static final Logger LOG = Logger.getLogger(GgufModelView.class.getName());
    private static final String FILE_TYPE = "general.file_type";

    @Override
    public void addTo(ModelContext ctx, List<ModelTable> tables, TreeBuilder tree) {
        for (ModelTable t : tables) {
            switch (t) {
                case ModelTable.Gguf g -> addTo(ctx, g, tree);
                case ModelTable.UnreadableGguf u -> LOG.warning(ctx.manifest().name() + ": converted files of "
                        + (u.folder().isEmpty() ? "model.gguf" : u.folder() + "/model.gguf") + " left out: " + u.reason());
                case ModelTable.Safetensors _ -> { }
            }
        }
    }

    /** The files of one GGUF layer, in its folder ({@code ""}, or {@code draft/} for a draft layer, beside its {@code model.gguf}). */
    private static void addTo(ModelContext ctx, ModelTable.Gguf layer, TreeBuilder tree) {
        ModelTable.Gguf model = readThrough(layer);
        BlobRef blob = new BlobRef(model.layer().digest().get(), model.layer().size());
        GgufFile g = model.file();
        String dir = model.folder().isEmpty() ? "" : model.folder() + "/";
        String named = dir;
        HfFolder hf = hfFolder(ctx, model);
        if (hf != null) {
            try {
                GgufHfFiles.add(ctx, hf, g, blob, tree, dir);
                named = dir + "gguf/";
            } catch (HfUnsupported | FormatException | IllegalArgumentException | ArithmeticException e) {
                LOG.warning(ctx.manifest().name() + ": Hugging Face files of " + dir + "model.gguf left out: " + e.getMessage());
            }
        }
        ByteSource stored = put(ctx, tree, named + "model.safetensors", () -> safetensors(g, blob, null, null), "GGUF tensors; quantized as F32");
        for (OutputType out : OutputType.values()) {
            put(ctx, tree, named + out.inFolder("model.safetensors"), () -> safetensors(g, blob, out, stored), "GGUF tensors as " + out.dtype);
            put(ctx, tree, dir + "model." + out.variant + ".gguf", () -> gguf(g, blob, out), "GGUF with quantized tensors as " + out.ggml);
        }
    }

    /**
     * Adds one converted file and returns its bytes; one that cannot be built is left out alone (one log line,
     * null returned), the others still appear.
     */
    private static ByteSource put(ModelContext ctx, TreeBuilder tree, String path, Supplier<ByteSource> source, String description) {
        try {
            ByteSource s = source.get();
            ViewFiles.put(ctx, tree, path, s, description);
            return s;
        } catch (FormatException | IllegalArgumentException | ArithmeticException e) {
            LOG.warning(ctx.manifest().name() + ": " + path + " left out: " + e.getMessage());
            return null;
        }
    }

    /**
     * The model's Hugging Face folder, or null (with one log line saying why) when its architecture,
     * tensors or metadata are not supported; then the GGUF-named files keep their top-level names.
     */
    private static HfFolder hfFolder(ModelContext ctx, ModelTable.Gguf model) {
        try {
            HfFolder hf = hfFolderOf(ctx.store(), ctx.manifest(), model);
            if (hf.tokenizerProblem() != null) {
                LOG.warning(ctx.manifest().name() + ": tokenizer files left out: " + hf.tokenizerProblem());
            }
            if (hf.chatTemplate().problem() != null) {
                LOG.info(ctx.manifest().name() + ": no chat_template in tokenizer_config.json: " + hf.chatTemplate().problem());
            }
            return hf;
        } catch (HfUnsupported | FormatException | IllegalArgumentException | ArithmeticException | IndexOutOfBoundsException e) {
            LOG.info(ctx.manifest().name() + ": no Hugging Face folder" + (model.folder().isEmpty() ? "" : " in " + model.folder() + "/")
                    + ": " + e.getMessage());
            return null;
        }
    }

    /**
     * The Hugging Face folder of a GGUF model of manifest {@code m} (reads the small F32 vectors
     * {@link HfFolder#VECTORS}, {@code rope_freqs.weight} and {@code rope_factors_long/short.weight}, from the blob
     * when there are any, and the model's Ollama template layer for the chat template of the top folder's
     * {@code tokenizer_config.json}).
     *
     * @throws HfUnsupported (or a {@link FormatException}, {@link IllegalArgumentException},
     *                       {@link ArithmeticException}) saying why the model has none
     */
    public static HfFolder hfFolderOf(OllamaStore store, Manifest m, ModelTable.Gguf stored) {
        ModelTable.Gguf model = readThrough(stored);
        if (!model.folder().isEmpty()) {   // a draft layer's folder has no chat template of its own
            return HfFolder.of(model.file(), GgufHfFiles.vectors(store, model.layer(), model.file()));
        }
        FolderHeader fh = folderHeader(stored.file());
        Map<String, float[]> vectors = GgufHfFiles.vectors(store, model.layer(), fh.header());
        try {
            return HfFolder.of(fh.header(), vectors, OllamaTemplateText.of(store, m), fh.concatenations());
        } catch (IOException e) {
            LOG.warning(m.name() + ": template layer not read for tokenizer_config.json: " + e.getMessage());
            return HfFolder.of(fh.header(), vectors, null, fh.concatenations()).withUnreadableTemplate(e.getMessage());
        }
    }

    /**
     * The table the files are built from (docs/SEMANTICS.md "Ollama's GGUF dialect"): for a model layer in
     * Ollama's dialect whose translation for the views ({@link Dialects#textForViews}) slices every tensor from the
     * blob, the translated header (its tensor offsets still address the blob, its new KVs are encoded from their
     * values); otherwise the stored header.
     */
    public static ModelTable.Gguf readThrough(ModelTable.Gguf model) {
        return model.folder().isEmpty() ? new ModelTable.Gguf(model.layer(), forViews(model.file()), model.folder()) : model;
    }

    /**
     * The header of a model layer the views read ({@link #readThrough}): the translated one for Ollama's dialect when its
     * translation slices every tensor from the blob, else {@code stored}. Files rebuilt from the blob at read time
     * ({@code tokenizer.json}) read the header through this too, so that they are built from what the directory was.
     */
    static GgufFile forViews(GgufFile stored) {
        if (Dialects.textForViews(stored) instanceof Outcome.Translated t && t.translation().slicesOnly()) {
            return t.translation().header();
        }
        return stored;
    }

    /**
     * The header a model layer's Hugging Face folder reads ({@code header}) and, for each of its computed tensors, the blob
     * tensors whose rows it concatenates ({@code concatenations}, by translated name).
     */
    record FolderHeader(GgufFile header, Map<String, List<GgufTensorInfo>> concatenations) {
    }

    /**
     * The header of a model layer's Hugging Face folder (docs/SEMANTICS.md "Ollama's GGUF dialect"): the views' header
     * ({@link #forViews}) when that is the translation; else, for a dialect whose translation computes nothing but
     * concatenations of whole blob tensors (GLM-OCR's fused {@code ffn_up}, docs/FORMATS.md §12.15), the translated
     * header, each concatenation read from its parts' blob slices; else {@code stored}. Files rebuilt from the blob at
     * read time ({@code tokenizer.json}) read the header through this too.
     */
    static FolderHeader folderHeader(GgufFile stored) {
        GgufFile views = forViews(stored);
        if (views != stored) {
            return new FolderHeader(views, Map.of());
        }
        if (Dialects.text(stored) instanceof Outcome.Translated t && !t.translation().ops().isEmpty()
                && t.translation().ops().values().stream().allMatch(o -> o instanceof TensorOp.Concat)) {
            GgufFile h = t.translation().header();
            Map<String, List<GgufTensorInfo>> parts = new HashMap<>();
            t.translation().ops().forEach((name, op) -> {
                TensorOp.Concat c = (TensorOp.Concat) op;
                GgufTensorInfo whole = h.tensor(name);
                if (whole == null || whole.rank() != 2 || whole.ne()[1] % c.from().size() != 0) {
                    throw new HfUnsupported("translated tensor " + name + " is not a concatenation of whole matrices");
                }
                long rows = whole.ne()[1] / c.from().size();
                List<GgufTensorInfo> p = new ArrayList<>();
                for (int i = 0; i < c.from().size(); i++) {
                    p.add(new GgufTensorInfo(c.from().get(i), new long[] {whole.ne()[0], rows}, whole.type(), c.offsets().get(i)));
                }
                parts.put(name, List.copyOf(p));
            });
            return new FolderHeader(h, Map.copyOf(parts));
        }
        return new FolderHeader(stored, Map.of());
    }

    private static Segment slice(GgufFile g, BlobRef blob, GgufTensorInfo t) {
        return new Segment.BlobSlice(blob, Math.addExact(g.dataStart(), t.offset()), t.byteSize());
    }

    private static Segment convert(GgufFile g, BlobRef blob, GgufTensorInfo t, OutputType out) {
        return new Segment.Converted(UnitConverted.blocks(blob, Math.addExact(g.dataStart(), t.offset()),
                t.elements() / t.type().blockElements(), GgmlDequantizers.forType(t.type()), out, t.name(), t.type().name()));
    }

    /**
     * {@code out == null}: floats/integers as stored, quantized as F32; else every non-integer tensor as {@code out};
     * the header shared with {@code sameHeader} (or null) when equal ({@link FileAssembly#safetensors}).
     */
    static ByteSource safetensors(GgufFile g, BlobRef blob, OutputType out, ByteSource sameHeader) {
        List<SafetensorsWriter.Spec> specs = new ArrayList<>();
        Map<String, Segment> data = new HashMap<>();
        for (GgufTensorInfo t : g.tensors()) {
            Dtype stored = ElementTypes.dtype(t.type()).orElse(null);
            Dtype dtype;
            Segment seg;
            if (t.type().isInteger() || (stored != null && (out == null || stored == out.dtype))) {
                dtype = stored;
                seg = slice(g, blob, t);
            } else {
                OutputType o = out == null ? OutputType.F32 : out;
                dtype = o.dtype;
                seg = convert(g, blob, t, o);
            }
            specs.add(new SafetensorsWriter.Spec(t.name(), dtype, t.shape()));
            data.put(t.name(), seg);
        }
        return FileAssembly.safetensors(specs, Map.of("format", "pt"), data, sameHeader);
    }

    static ByteSource gguf(GgufFile g, BlobRef blob, OutputType out) {
        boolean hasFileType = g.kv(FILE_TYPE) != null;
        List<Segment> head = new ArrayList<>();
        head.add(new Segment.Literal(GgufWriter.preamble(g.version(), g.tensors().size(), g.kvs().size() + (hasFileType ? 0 : 1))));
        byte[] fileType = GgufWriter.encodeKv(FILE_TYPE, GgufValueType.UINT32, out.llamaFileType);
        for (GgufKv kv : g.kvs()) {
            head.add(kv.key().equals(FILE_TYPE) ? new Segment.Literal(fileType) : TranslatedGguf.kv(kv, blob));
        }
        if (!hasFileType) {
            head.add(new Segment.Literal(fileType));
        }
        List<FileAssembly.GgufTensor> tensors = new ArrayList<>();
        for (GgufTensorInfo t : g.tensors()) {
            boolean convert = t.type().isQuantized();
            tensors.add(new FileAssembly.GgufTensor(t.name(), t.ne(), convert ? out.ggml : t.type(),
                    convert ? convert(g, blob, t, out) : slice(g, blob, t)));
        }
        return FileAssembly.gguf(head, tensors, g.alignment());
    }
}
