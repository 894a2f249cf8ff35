package dev.modelfs.view.synth;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.arch.QkPermutation;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.FileAssembly;
import dev.modelfs.bytes.Segment;
import dev.modelfs.arch.TensorRewrite;
import dev.modelfs.convert.ElementFunction;
import dev.modelfs.convert.MlxParts;
import dev.modelfs.convert.OutputType;
import dev.modelfs.convert.UnitConverted;
import dev.modelfs.convert.UnitSource;
import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.format.gguf.GgufWriter;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.ModelTable;
import dev.modelfs.quant.mlx.MlxRepack;
import dev.modelfs.store.Layer;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.MediaType;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.synth.SynthesizedGgufPlanner.Choice;
import dev.modelfs.synth.SynthesizedGgufPlanner.Plan;
import dev.modelfs.synth.SynthesizedGgufPlanner.Result;
import dev.modelfs.synth.SynthesizedGgufPlanner.TensorPlan;
import dev.modelfs.synth.SynthesizedGgufPlanner;
import dev.modelfs.tree.ModelContext;
import dev.modelfs.tree.ModelView;
import dev.modelfs.tree.TreeBuilder;
import dev.modelfs.tree.ViewFiles;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongUnaryOperator;
import java.util.logging.Logger;

/**
 * The synthesized GGUF of a safetensors LLM (docs/SEMANTICS.md "Synthesized GGUF", FORMATS.md §7.5):
 * for every component whose {@code config.json} names a supported architecture, {@code [c/]model.gguf}
 * (lossless types where GGUF has one, else BF16) and {@code [c/]model.{fp32,fp16,bf16}.gguf} (every
 * tensor in that type, norms F32). Headers are built in memory from metadata; tensor bytes are blob
 * slices or {@link UnitConverted} data. A component that cannot be planned gets no GGUF and one log line.
 */
public final class SynthesizedGgufView implements ModelView {
    private static final Logger LOG = Logger.getLogger(SynthesizedGgufView.class.getName());
    private static final ObjectMapper STRICT = new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    private static final int MAX_JSON = 64 << 20;
    private static final int ALIGNMENT = 32;
    private static final int MAX_XATTR = 32 << 10;

    @Override
    public void addTo(ModelContext ctx, List<ModelTable> tables, TreeBuilder tree) {
        for (ModelTable t : tables) {
            if (t instanceof ModelTable.Safetensors s) {
                for (Result r : plans(ctx.store(), ctx.manifest(), s)) {
                    String dir = r.component().isEmpty() ? "" : r.component() + "/";
                    switch (r) {
                        case Result.Planned p -> addFiles(ctx, tree, dir, p.plan());
                        case Result.Refused f -> LOG.warning(ctx.manifest().name() + ": " + dir + "model.gguf left out: " + f.reason());
                    }
                }
            }
        }
    }

    /**
     * The plans of every LLM component of {@code model} (components whose config.json has
     * {@code architectures} or {@code model_type}); also used by {@code modelfs show}.
     */
    public static List<Result> plans(OllamaStore store, Manifest m, ModelTable.Safetensors model) {
        List<Result> out = new ArrayList<>();
        model.table().byComponent().forEach((component, tensors) -> {
            JsonNode cfg = model.configs().get(component);
            if (cfg == null || !(cfg.has("architectures") || cfg.has("model_type")) || cfg.has("_class_name")) {
                return;
            }
            out.add(SynthesizedGgufPlanner.plan(component, tensors, inputs(store, m, component, cfg), t -> F16Exactness.check(store, t)));
        });
        return out;
    }

    private static SynthesizedGgufPlanner.Inputs inputs(OllamaStore store, Manifest m, String component, JsonNode cfg) {
        String problem = null;
        JsonNode tok = null;
        JsonNode tokCfg = null;
        try {
            tok = json(store, m, component, "tokenizer.json");
            tokCfg = json(store, m, component, "tokenizer_config.json");
        } catch (IOException e) {
            problem = e.getMessage();
        }
        return new SynthesizedGgufPlanner.Inputs(m.name().displayShortest(), cfg, tok, tokCfg, problem);
    }

    /** The JSON layer {@code <component>/<name>}, else the root's {@code <name>}; null if neither exists. */
    private static JsonNode json(OllamaStore store, Manifest m, String component, String name) throws IOException {
        Layer found = null;
        for (Layer l : m.layers(MediaType.Kind.JSON)) {
            if (l.digest().isPresent() && l.name() != null) {
                if (!component.isEmpty() && l.name().equals(component + "/" + name)) {
                    found = l;
                    break;
                }
                if (l.name().equals(name) && found == null) {
                    found = l;
                }
            }
        }
        if (found == null) {
            return null;
        }
        try {
            JsonNode n = STRICT.readTree(store.readSmallBlob(found.digest().get(), MAX_JSON));
            if (n == null || !n.isObject()) {
                throw new IOException(found.name() + " is not a JSON object");
            }
            return n;
        } catch (IOException e) {
            throw new IOException(found.name() + " unreadable: " + e.getMessage().lines().findFirst().orElse(""));
        }
    }

    private static void addFiles(ModelContext ctx, TreeBuilder tree, String dir, Plan plan) {
        try {
            List<GgmlType> own = plan.tensors().stream().map(TensorPlan::type).toList();
            ViewFiles.put(ctx, tree, dir + "model.gguf", gguf(plan, own, plan.fileType()), source(plan, own, null));
            for (OutputType out : OutputType.values()) {
                List<GgmlType> types = plan.tensors().stream().map(t -> t.staysF32() ? GgmlType.F32 : out.ggml).toList();
                ViewFiles.put(ctx, tree, dir + "model." + out.variant + ".gguf", gguf(plan, types, out.llamaFileType), source(plan, types, out));
            }
        } catch (FormatException | IllegalArgumentException | ArithmeticException e) {
            LOG.warning(ctx.manifest().name() + ": " + dir + "model.gguf left out: " + e.getMessage());
        }
    }

    /** {@code user.modelfs.source}: a summary, then one line per tensor while it fits. */
    private static String source(Plan plan, List<GgmlType> types, OutputType out) {
        StringBuilder sb = new StringBuilder("synthesized GGUF (" + plan.architecture().ggufName() + ")"
                + (out == null ? ": lossless types where GGUF has one, else BF16" : ": every tensor " + out.ggml + ", norms F32"));
        Map<GgmlType, Integer> counts = new EnumMap<>(GgmlType.class);
        types.forEach(t -> counts.merge(t, 1, Integer::sum));
        sb.append("; tensors: ").append(counts);
        for (int i = 0; i < plan.tensors().size() && sb.length() < MAX_XATTR; i++) {
            TensorPlan t = plan.tensors().get(i);
            sb.append('\n').append(t.ggufName()).append(" <- ");
            sb.append(out == null ? t.describe() : types.get(i) + (t.source() == null ? " (computed)" : " from " + t.source().name()));
        }
        return sb.length() > MAX_XATTR ? sb.substring(0, MAX_XATTR) : sb.toString();
    }

    /** The whole file: preamble, KVs (plus general.file_type), tensor infos, padding, tensor data. */
    static ByteSource gguf(Plan plan, List<GgmlType> types, int fileType) {
        List<GgufKv> kvs = new ArrayList<>(plan.kvs());
        kvs.add(kvs.indexOf(kvs.stream().filter(k -> k.key().equals("general.quantization_version")).findFirst().orElseThrow()),
                new GgufKv("general.file_type", GgufValueType.UINT32, fileType, 0, 0));
        ByteArrayOutputStream header = new ByteArrayOutputStream();
        header.writeBytes(GgufWriter.preamble(3, plan.tensors().size(), kvs.size()));
        for (GgufKv kv : kvs) {
            header.writeBytes(GgufWriter.encodeKv(kv.key(), kv.type(), kv.value()));
        }
        List<FileAssembly.GgufTensor> tensors = new ArrayList<>();
        for (int i = 0; i < plan.tensors().size(); i++) {
            TensorPlan t = plan.tensors().get(i);
            List<Segment> data = new ArrayList<>();
            for (TensorPlan part : t.parts() == null ? List.of(t) : t.parts()) {   // experts stacked: one after the other
                data.add(data(part, types.get(i), plan.architecture().normShift()));
            }
            tensors.add(new FileAssembly.GgufTensor(t.ggufName(), t.ne(), types.get(i), data));
        }
        return FileAssembly.gguf(List.of(new Segment.Literal(header.toByteArray())), tensors, ALIGNMENT);
    }

    /** The bytes of tensor {@code t} in {@code type}. */
    private static Segment data(TensorPlan t, GgmlType type, float normShift) {
        if (t.choice() == Choice.COMPUTED) {
            if (type != GgmlType.F32) {
                throw new IllegalArgumentException(t.ggufName() + ": computed tensors are F32");
            }
            ByteBuffer b = ByteBuffer.allocate(4 * t.computed().length).order(ByteOrder.LITTLE_ENDIAN);
            for (float f : t.computed()) {
                b.putFloat(f);
            }
            return new Segment.Literal(b.array());
        }
        LogicalTensor src = t.source();
        String what = t.ggufName() + " " + type + " <- " + src.name();
        if (t.rewrite() != null) {
            return rewritten(t, type, what);
        }
        if (t.choice() == Choice.NORM_SHIFT_F32) {
            if (type != GgmlType.F32) {
                throw new IllegalArgumentException(t.ggufName() + ": shifted norms are F32");
            }
            UnitSource inner = src.quantized() ? UnitSource.MlxGroups.of(src, t.rowLength(), OutputType.F32)
                    : UnitSource.Blocks.stored(src.main(), t.rowLength(), OutputType.F32);
            return new Segment.Converted(new UnitConverted(new UnitSource.Shifted(inner, normShift, OutputType.F32), t.rows(), null,
                    what + " + " + normShift));
        }
        if (!src.quantized()) {
            OutputType out = OutputType.of(type);
            if (t.permutation() == null && t.split() == null && src.main().dtype() == out.dtype) {
                var r = src.main().bytes();
                return new Segment.BlobSlice(new BlobRef(r.blob(), r.blobSize()), r.offset(), r.length());
            }
            return new Segment.Converted(new UnitConverted(UnitSource.Blocks.stored(src.main(), t.rowLength(), out), t.rows(),
                    order(t, what), orderIdentity(t), what));
        }
        UnitSource rows = switch (type) {
            case MXFP4 -> new UnitSource.Repacked(new MlxParts(src), t.rowLength(), MlxRepack.Kind.MXFP4);
            case NVFP4 -> new UnitSource.Repacked(new MlxParts(src), t.rowLength(), MlxRepack.Kind.NVFP4);
            case Q4_1 -> new UnitSource.Repacked(new MlxParts(src), t.rowLength(), MlxRepack.Kind.Q4_1);
            default -> UnitSource.MlxGroups.of(src, t.rowLength(), OutputType.of(type));
        };
        return new Segment.Converted(new UnitConverted(rows, t.rows(), order(t, what), orderIdentity(t), what));
    }

    /**
     * The bytes of a tensor the converter rewrites ({@link TensorRewrite}): units are rows, or the elements of a 1-D
     * tensor whose elements are reordered; the V-head order as the units' order, the column blocks permuted after the
     * conversion ({@link UnitSource.ColumnBlocks}), {@code -exp(x)} applied in f32 ({@link UnitSource.Shifted}).
     */
    private static Segment rewritten(TensorPlan t, GgmlType type, String what) {
        TensorRewrite rw = t.rewrite();
        LogicalTensor src = t.source();
        boolean elements = t.ne().length == 1 && rw.rows() != null;
        long unit = elements ? 1 : t.rowLength();
        long units = elements ? t.ne()[0] : t.rows();
        if (rw.rows() != null && rw.rows().units() != units) {
            throw new IllegalArgumentException(what + ": V-head order of " + rw.rows().units() + " units for " + units);
        }
        OutputType f32 = OutputType.F32;
        UnitSource rows;
        if (rw.function() == TensorRewrite.Function.NEG_EXP) {
            if (type != GgmlType.F32) {
                throw new IllegalArgumentException(what + ": -exp(x) is written in F32");
            }
            UnitSource inner = src.quantized() ? UnitSource.MlxGroups.of(src, unit, f32) : UnitSource.Blocks.stored(src.main(), unit, f32);
            rows = new UnitSource.Shifted(inner, new ElementFunction.NegExp(), f32);
        } else if (!src.quantized()) {
            rows = UnitSource.Blocks.stored(src.main(), unit, OutputType.of(type));
        } else {
            rows = switch (type) {
                case MXFP4 -> new UnitSource.Repacked(new MlxParts(src), unit, MlxRepack.Kind.MXFP4);
                case NVFP4 -> new UnitSource.Repacked(new MlxParts(src), unit, MlxRepack.Kind.NVFP4);
                case Q4_1 -> new UnitSource.Repacked(new MlxParts(src), unit, MlxRepack.Kind.Q4_1);
                default -> UnitSource.MlxGroups.of(src, unit, OutputType.of(type));
            };
        }
        if (rw.columns() != null) {
            rows = new UnitSource.ColumnBlocks(rows, rw.columns().blockOrder());
        }
        TensorRewrite.VHeads order = rw.rows();
        return new Segment.Converted(new UnitConverted(rows, units, order == null ? null : order::sourceOf,
                order == null ? null : order.identity(), what + rw.describe()));
    }

    /** What {@link #order} is, completely (the on-disk cache's identity, docs/FORMATS.md §11); null in source order. */
    private static String orderIdentity(TensorPlan t) {
        if (t.split() != null) {
            SynthesizedGgufPlanner.RowSplit s = t.split();
            return "row-split block " + s.blockRows() + " offset " + s.offset() + " rows " + s.rows();
        }
        return t.permutation() == null ? null : t.permutation().ggufOrder().toString();
    }

    /**
     * The GGUF row order of {@code t}: GGUF row {@code r} is Hugging Face row {@code hfRowOf(r)}, or for a part of a fused
     * tensor the source row of its {@link SynthesizedGgufPlanner.RowSplit}; null when in source order.
     */
    private static LongUnaryOperator order(TensorPlan t, String what) {
        if (t.split() != null) {
            SynthesizedGgufPlanner.RowSplit s = t.split();
            return s::sourceRow;
        }
        QkPermutation p = t.permutation();
        if (p == null) {
            return null;
        }
        if (p.rows() != t.rows()) {
            throw new IllegalArgumentException(what + ": permutation of " + p.rows() + " rows for " + t.rows() + " rows");
        }
        return p.ggufOrder();
    }
}
