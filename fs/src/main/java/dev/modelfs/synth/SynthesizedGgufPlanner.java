package dev.modelfs.synth;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.arch.ArchSpec;
import dev.modelfs.arch.Architecture;
import dev.modelfs.arch.ConfigKeys;
import dev.modelfs.arch.QkPermutation;
import dev.modelfs.arch.TensorNames;
import dev.modelfs.arch.TensorRewrite;
import dev.modelfs.arch.TokenizerKvs;
import dev.modelfs.format.Shapes;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.quant.mlx.MlxMode;
import dev.modelfs.quant.mlx.MlxQuant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Plans the synthesized GGUF of one safetensors LLM component (docs/FORMATS.md §7.5, SEMANTICS.md
 * "Synthesized GGUF"): which GGUF tensors, with which names, {@code ne}, types and sources, and which
 * metadata. Pure: reads nothing but its arguments (the f16-exactness of affine scales is asked through
 * {@code f16Exact}).
 *
 * <p>Invariants of a {@link Result.Planned} plan: tensor names unique and known to llama.cpp for the
 * architecture; every tensor llama.cpp requires for every layer is present; every HF shape agrees with
 * {@code config.json}; {@code ne} is the reversed logical shape; a permutation is present exactly for
 * llama q/k tensors. Anything else is a {@link Result.Refused} with a one-line reason.
 */
public final class SynthesizedGgufPlanner {
    private SynthesizedGgufPlanner() {}

    /** How a GGUF tensor of {@code model.gguf} is made from its source. */
    public enum Choice {
        /** bytes as stored (BF16, F16, F32). */
        COPY("as stored"),
        /** a 1-D tensor widened to F32 (llama.cpp's norms). Lossless. */
        WIDEN_F32("widened to F32, lossless"),
        /** an F64 tensor narrowed to F32 (one rounding). */
        NARROW_F32("F64 rounded to F32"),
        /** MLX mxfp4 → GGUF MXFP4, nibbles re-packed. Lossless. */
        MXFP4("mxfp4 re-packed as MXFP4, lossless"),
        /** MLX nvfp4 without global scale → GGUF NVFP4, nibbles re-packed. Lossless. */
        NVFP4("nvfp4 re-packed as NVFP4, lossless"),
        /** MLX int4 affine with f16-exact scales and biases → GGUF Q4_1. Lossless. */
        Q4_1("int4 re-packed as Q4_1, lossless"),
        /** dequantized to BF16 (one rounding). */
        DEQUANT_BF16("dequantized to BF16"),
        /** dequantized to F32 where llama.cpp expects F32 (no rounding beyond the f32 decode). */
        DEQUANT_F32("dequantized to F32"),
        /** a norm weight plus the architecture's {@link Architecture#normShift} (Gemma's 1 + w), in F32. */
        NORM_SHIFT_F32("1 + w in F32, as llama.cpp's converter writes Gemma and Qwen 3.5 norms"),
        /** {@code -exp(x)} of every value, in F32 (Qwen 3.5's {@code ssm_a} from {@code A_log}). */
        NEG_EXP_F32("-exp(x) in F32, as llama.cpp's converter writes ssm_a"),
        /** computed from config.json (llama3 rope factors). */
        COMPUTED("computed from config.json");

        /** Human description ({@code modelfs show}, {@code user.modelfs.source}). */
        public final String text;

        Choice(String text) {
            this.text = text;
        }
    }

    /**
     * One GGUF tensor. {@code source} is null only for {@link Choice#COMPUTED} (then {@code computed}
     * holds the F32 values); {@code permutation} is null unless rows are permuted. {@code parts} is null
     * unless the tensor is stacked from per-expert sources: then it holds one 2-D plan per expert, in expert
     * order, all of {@code type} and {@code choice}, whose bytes follow each other; {@code source} is the first's.
     * {@code split} is null unless the tensor is one part of a fused source ({@link RowSplit}). {@code rewrite} is null
     * unless the converter reorders, maps or squeezes the tensor ({@link TensorRewrite}: Qwen 3.5's gated delta-net); it is
     * never set together with {@code permutation}, {@code parts} or {@code split}.
     */
    public record TensorPlan(String ggufName, long[] ne, GgmlType type, Choice choice, LogicalTensor source,
                             QkPermutation permutation, float[] computed, List<TensorPlan> parts, RowSplit split, TensorRewrite rewrite) {
        /** A tensor made from one source, as one part of a fused source ({@code split}), or stacked ({@code parts}). */
        public TensorPlan(String ggufName, long[] ne, GgmlType type, Choice choice, LogicalTensor source,
                          QkPermutation permutation, float[] computed, List<TensorPlan> parts, RowSplit split) {
            this(ggufName, ne, type, choice, source, permutation, computed, parts, split, null);
        }

        /** A tensor made from one source (or computed). */
        public TensorPlan(String ggufName, long[] ne, GgmlType type, Choice choice, LogicalTensor source,
                          QkPermutation permutation, float[] computed) {
            this(ggufName, ne, type, choice, source, permutation, computed, null, null);
        }

        /** A tensor stacked from per-expert {@code parts} (or made from one source when null). */
        public TensorPlan(String ggufName, long[] ne, GgmlType type, Choice choice, LogicalTensor source,
                          QkPermutation permutation, float[] computed, List<TensorPlan> parts) {
            this(ggufName, ne, type, choice, source, permutation, computed, parts, null);
        }

        /** Elements per row ({@code ne[0]}). */
        public long rowLength() {
            return ne[0];
        }

        /** Number of rows (product of {@code ne[1..]}). */
        public long rows() {
            return Shapes.product(ne, 1);
        }

        /** Whether llama.cpp wants this tensor in F32 in every variant. */
        public boolean staysF32() {
            return TensorNames.staysF32(ggufName) || ne.length == 1;
        }

        /** What {@code modelfs show} prints for it. */
        public String describe() {
            String src = source == null ? "" : source.name() + (parts == null ? "" : " and " + (parts.size() - 1) + " more experts")
                    + " " + (source.quantized()
                    ? source.quant().canonicalName() + " g" + source.quant().groupSize() : source.main().dtype().name()) + ": ";
            return src + type + " (" + choice.text + (permutation != null ? ", q/k rows permuted" : "")
                    + (rewrite != null ? rewrite.describe() : "")
                    + (split != null ? ", rows " + split.offset() + "-" + (split.offset() + split.rows() - 1) + " of every "
                    + split.blockRows() : "") + ")";
        }
    }

    /**
     * The rows of one part of a fused source (a row-split {@link dev.modelfs.arch.Assembly}): the source's rows come in blocks
     * of {@code blockRows} (one per expert), of which this part is rows {@code [offset, offset + rows)}.
     */
    public record RowSplit(long blockRows, long offset, long rows) {
        /** The source row of this part's row {@code r}. */
        public long sourceRow(long r) {
            return r / rows * blockRows + offset + r % rows;
        }
    }

    /** The planned file: architecture, KVs (without {@code general.file_type}), tensors in file order. */
    public record Plan(String component, Architecture architecture, List<GgufKv> kvs, List<TensorPlan> tensors) {
        /** {@code general.file_type} of {@code model.gguf}: the llama_ftype of its dominant matrix type. */
        public int fileType() {
            Map<GgmlType, Long> count = new HashMap<>();
            for (TensorPlan t : tensors) {
                if (t.ne().length > 1) {
                    long n = t.rowLength() * t.rows();
                    count.merge(t.type(), n, Long::sum);
                }
            }
            GgmlType top = count.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse(GgmlType.F32);
            return switch (top) {
                case F16 -> 1;
                case Q4_1 -> 3;
                case BF16 -> 32;
                case MXFP4 -> 38;
                case NVFP4 -> 39;
                default -> 0;
            };
        }
    }

    /** The outcome for one component. */
    public sealed interface Result {
        /** The component ({@code ""} for the model directory itself). */
        String component();

        /** The file can be synthesized as {@code plan} says. */
        record Planned(Plan plan) implements Result {
            @Override
            public String component() {
                return plan.component();
            }
        }

        /** No GGUF for {@code component}; {@code reason} is one line for the log and {@code modelfs show}. */
        record Refused(String component, String reason) implements Result {}
    }

    /** Inputs besides the tensor table: the component's JSON files (null when absent or unreadable). */
    public record Inputs(String modelName, JsonNode config, JsonNode tokenizer, JsonNode tokenizerConfig, String tokenizerProblem) {}

    /**
     * A per-layer GGUF name: layer, name, suffix; the suffix may be absent (Qwen 3.5's {@code ssm_a}) or {@code scale}
     * (Gemma 4's router and expert scales, FORMATS.md §7.3).
     */
    private static final Pattern LAYER = Pattern.compile("blk\\.(\\d+)\\.(.+?)(?:\\.(weight|bias|scale))?");
    private static final Set<String> DROPPED = Set.of("rotary_emb.inv_freq");

    /**
     * Plans {@code component} of {@code table}.
     *
     * @param f16Exact whether every value of an affine tensor's scales and biases is exactly representable in f16
     */
    public static Result plan(String component, List<LogicalTensor> tensors, Inputs in, Predicate<LogicalTensor> f16Exact) {
        try {
            return new Result.Planned(planOrThrow(component, tensors, in, f16Exact));
        } catch (IllegalArgumentException | ArithmeticException e) {
            return new Result.Refused(component, e.getMessage());
        }
    }

    private static Plan planOrThrow(String component, List<LogicalTensor> tensors, Inputs in, Predicate<LogicalTensor> f16Exact) {
        JsonNode cfg = in.config();
        if (cfg == null) {
            throw new IllegalArgumentException("no config.json");
        }
        JsonNode archs = cfg.path("architectures");
        String hfArch = archs.isArray() && !archs.isEmpty() && archs.get(0).isTextual() ? archs.get(0).asText() : null;
        String modelType = cfg.path("model_type").isTextual() ? cfg.path("model_type").asText() : null;
        Optional<Architecture.Text> text = Architecture.textPartOf(hfArch);
        ArchSpec.TextPart textPart = text.map(Architecture.Text::part).orElse(null);
        if (textPart != null) {   // the text model of a multimodal one: its config, its tensors (FORMATS.md §7.5)
            cfg = textConfig(cfg, textPart, text.get().architecture());
        }
        Architecture arch = textPart != null ? text.get().architecture() : switch (Architecture.fromHf(hfArch, modelType)) {
            case Architecture.Resolution.Supported s -> s.architecture();
            case Architecture.Resolution.Unsupported u -> throw new IllegalArgumentException(u.reason());
        };
        ConfigKeys.Dims d = ConfigKeys.dims(arch, cfg);
        List<GgufKv> archKvs = ConfigKeys.toGguf(arch, cfg);
        if (in.tokenizerProblem() != null) {
            throw new IllegalArgumentException(in.tokenizerProblem());
        }
        if (in.tokenizer() == null) {
            throw new IllegalArgumentException("no tokenizer.json");
        }
        arch.spec().checkTokenizer(in.tokenizer(), d);
        List<GgufKv> tokKvs = TokenizerKvs.of(in.tokenizer(), in.tokenizerConfig(), cfg, d.vocab(), arch.spec());

        List<TensorPlan> plans = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (ArchSpec.ComputedTensor c : arch.spec().computedTensors(cfg, archKvs, d)) {
            float[] f = c.values();
            plans.add(new TensorPlan(c.ggufName(), new long[]{f.length}, GgmlType.F32, Choice.COMPUTED, null, null, f));
            names.add(c.ggufName());
        }
        Map<String, TreeMap<Integer, LogicalTensor>> experts = new TreeMap<>();
        for (LogicalTensor t : tensors) {
            String hf = textPart == null ? t.relativeName() : textPart.textName(t.relativeName());
            if (hf == null || DROPPED.stream().anyMatch(hf::contains) || arch.spec().leftOut(hf)) {
                continue;
            }
            var fused = TensorNames.splitParts(arch, hf).or(() -> arch.spec().splitToGguf(hf));
            if (fused.isPresent()) {
                for (TensorPlan part : split(arch, d, cfg, t, fused.get(), f16Exact)) {
                    if (!names.add(part.ggufName())) {
                        throw new IllegalArgumentException("two tensors map to " + part.ggufName());
                    }
                    plans.add(part);
                }
                continue;
            }
            var slice = TensorNames.perExpert(arch, hf);
            if (slice.isPresent()) {
                if (experts.computeIfAbsent(slice.get().stackedGguf(), k -> new TreeMap<>()).put(slice.get().expert(), t) != null) {
                    throw new IllegalArgumentException("two tensors are expert " + slice.get().expert() + " of " + slice.get().stackedGguf());
                }
                continue;
            }
            String g = TensorNames.toGguf(arch, hf).or(() -> TensorNames.renamedToGguf(arch, hf))
                    .or(() -> arch.spec().otherGgufName(hf)).orElseThrow(() ->
                    new IllegalArgumentException("tensor " + hf + " has no GGUF name for " + arch.ggufName()));
            if (!names.add(g)) {
                throw new IllegalArgumentException("two tensors map to " + g);
            }
            long[] shape = t.logicalShape();
            long[] want = expectedShape(arch, d, cfg, g);
            if (!Arrays.equals(shape, want)) {
                throw new IllegalArgumentException(hf + " has shape " + Arrays.toString(shape) + ", config.json implies " + Arrays.toString(want));
            }
            TensorRewrite rw = rewrite(arch, cfg, g);
            long[] gguf = rw != null && rw.ggufShape() != null ? rw.ggufShape() : shape;
            if (Shapes.product(gguf, 0) != Shapes.product(shape, 0)) {
                throw new IllegalArgumentException(g + ": GGUF shape " + Arrays.toString(gguf) + " of HF shape " + Arrays.toString(shape));
            }
            long[] ne = new long[gguf.length];
            for (int i = 0; i < gguf.length; i++) {
                ne[i] = gguf[gguf.length - 1 - i];
            }
            QkPermutation perm = TensorNames.permutation(arch, g).map(w ->
                    QkPermutation.of(w, d.heads(), d.headsKv(), (int) shape[0])).orElse(null);
            TensorPlan tp = choose(g, ne, t, perm, f16Exact);
            if (arch.normShift() != 0 && arch.spec().shiftsNorm(hf)) {
                tp = new TensorPlan(g, ne, GgmlType.F32, Choice.NORM_SHIFT_F32, t, null, null);
            }
            if (rw != null) {
                tp = rewritten(tp, rw, t);
            }
            plans.add(tp);
        }
        for (var e : experts.entrySet()) {
            if (!names.add(e.getKey())) {
                throw new IllegalArgumentException("two tensors map to " + e.getKey());
            }
            plans.add(stacked(arch, d, cfg, e.getKey(), e.getValue(), f16Exact));
        }
        checkComplete(arch, d, cfg, names);
        plans.sort(Comparator.comparing(SynthesizedGgufPlanner::order));

        List<GgufKv> kvs = new ArrayList<>();
        kvs.add(archKvs.getFirst());
        kvs.add(new GgufKv("general.type", GgufValueType.STRING, "model", 0, 0));
        kvs.add(new GgufKv("general.name", GgufValueType.STRING, in.modelName() + (component.isEmpty() ? "" : "/" + component), 0, 0));
        kvs.addAll(archKvs.subList(1, archKvs.size()));
        kvs.add(new GgufKv("general.quantization_version", GgufValueType.UINT32, 2, 0, 0));
        kvs.addAll(tokKvs);
        return new Plan(component, arch, List.copyOf(kvs), List.copyOf(plans));
    }

    /**
     * The text config of a multimodal {@code cfg}: its {@code part.configField()} object with the text architecture's
     * canonical {@code architectures} and {@code model_type}, and {@code tie_word_embeddings} from the top when only there.
     */
    private static JsonNode textConfig(JsonNode cfg, ArchSpec.TextPart part, Architecture a) {
        JsonNode t = cfg.get(part.configField());
        if (t == null || !t.isObject()) {
            throw new IllegalArgumentException(part.hfArchitecture() + " config.json without a " + part.configField() + " object");
        }
        com.fasterxml.jackson.databind.node.ObjectNode c = ((com.fasterxml.jackson.databind.node.ObjectNode) t).deepCopy();
        c.putArray("architectures").add(a.hfArchitecture());
        c.put("model_type", a.hfModelType());
        if (!c.has("tie_word_embeddings") && cfg.has("tie_word_embeddings")) {
            c.set("tie_word_embeddings", cfg.get("tie_word_embeddings"));
        }
        return c;
    }

    private static TensorPlan choose(String g, long[] ne, LogicalTensor t, QkPermutation perm, Predicate<LogicalTensor> f16Exact) {
        boolean f32 = TensorNames.staysF32(g) || ne.length == 1;
        if (!t.quantized()) {
            Dtype dt = t.main().dtype();
            return switch (dt) {
                case F32 -> new TensorPlan(g, ne, GgmlType.F32, Choice.COPY, t, perm, null);
                case F16, BF16 -> f32 ? new TensorPlan(g, ne, GgmlType.F32, Choice.WIDEN_F32, t, perm, null)
                        : new TensorPlan(g, ne, dt == Dtype.F16 ? GgmlType.F16 : GgmlType.BF16, Choice.COPY, t, perm, null);
                case F64 -> new TensorPlan(g, ne, GgmlType.F32, Choice.NARROW_F32, t, perm, null);
                default -> throw new IllegalArgumentException(t.name() + ": dtype " + dt + " has no GGUF float type");
            };
        }
        MlxQuant q = t.quant();
        if (f32) {
            return new TensorPlan(g, ne, GgmlType.F32, Choice.DEQUANT_F32, t, perm, null);
        }
        boolean noGlobal = t.globalScale() == null;
        if (q.mode() == MlxMode.MXFP4 && noGlobal && t.scale().dtype() == Dtype.U8) {
            return new TensorPlan(g, ne, GgmlType.MXFP4, Choice.MXFP4, t, perm, null);
        }
        if (q.mode() == MlxMode.NVFP4 && noGlobal && t.scale().dtype() == Dtype.U8 && ne[0] % 64 == 0) {
            return new TensorPlan(g, ne, GgmlType.NVFP4, Choice.NVFP4, t, perm, null);
        }
        if (q.mode() == MlxMode.AFFINE && q.bits() == 4 && t.bias() != null && f16Exact.test(t)) {
            return new TensorPlan(g, ne, GgmlType.Q4_1, Choice.Q4_1, t, perm, null);
        }
        return new TensorPlan(g, ne, GgmlType.BF16, Choice.DEQUANT_BF16, t, perm, null);
    }

    /** The architecture's {@link TensorRewrite} of per-layer GGUF tensor {@code g}, or null. */
    private static TensorRewrite rewrite(Architecture a, JsonNode cfg, String g) {
        Matcher m = LAYER.matcher(g);
        if (!m.matches()) {
            return null;
        }
        String rest = m.group(2) + (m.group(3) == null ? "" : "." + m.group(3));
        return a.spec().rewrite(rest, Integer.parseInt(m.group(1)), cfg).orElse(null);
    }

    /**
     * Plan {@code p} of source {@code t} with rewrite {@code rw}: {@code -exp(x)} in F32; column blocks moved after the
     * conversion, so a re-packed type whose blocks do not divide a column block is dequantized to BF16 instead.
     */
    private static TensorPlan rewritten(TensorPlan p, TensorRewrite rw, LogicalTensor t) {
        if (p.permutation() != null) {
            throw new IllegalArgumentException(p.ggufName() + ": a q/k permutation and a rewrite");
        }
        GgmlType type = p.type();
        Choice choice = p.choice();
        if (rw.function() == TensorRewrite.Function.NEG_EXP) {
            type = GgmlType.F32;
            choice = Choice.NEG_EXP_F32;
        }
        if (rw.columns() != null && type.blockElements() > 1 && (rw.columns().headSize() % type.blockElements() != 0)) {
            type = GgmlType.BF16;   // only re-packed MLX types have blocks: the source is quantized
            choice = Choice.DEQUANT_BF16;
        }
        return new TensorPlan(p.ggufName(), p.ne(), type, choice, t, null, null, null, null, rw);
    }

    /**
     * The GGUF tensor {@code g} stacked from per-expert tensors {@code byExpert} (expert index → tensor): experts
     * {@code 0 … E-1} each of the {@code [out, in]} slice of the stacked shape config.json implies, all planned
     * as the same type: when the lossless choices differ (int4 experts of which only some have f16-exact scales
     * and biases), every expert is planned without Q4_1 (dequantized to BF16); if they still differ, refused.
     */
    private static TensorPlan stacked(Architecture arch, ConfigKeys.Dims d, JsonNode cfg, String g, TreeMap<Integer, LogicalTensor> byExpert,
                                      Predicate<LogicalTensor> f16Exact) {
        long[] want = expectedShape(arch, d, cfg, g);
        if (byExpert.size() != want[0] || byExpert.firstKey() != 0 || byExpert.lastKey() != want[0] - 1) {
            throw new IllegalArgumentException(g + ": experts " + byExpert.keySet() + " stored, config.json implies " + want[0]);
        }
        for (LogicalTensor t : byExpert.values()) {
            long[] shape = t.logicalShape();
            if (!Arrays.equals(shape, new long[]{want[1], want[2]})) {
                throw new IllegalArgumentException(t.relativeName() + " has shape " + Arrays.toString(shape) + ", config.json implies "
                        + Arrays.toString(new long[]{want[1], want[2]}));
            }
        }
        long[] ne = {want[2], want[1]};
        List<TensorPlan> parts = byExpert.values().stream().map(t -> choose(g, ne, t, null, f16Exact)).toList();
        if (!sameChoice(parts)) {
            parts = byExpert.values().stream().map(t -> choose(g, ne, t, null, x -> false)).toList();
        }
        if (!sameChoice(parts)) {
            throw new IllegalArgumentException(g + ": experts stored in different types (" + parts.stream()
                    .map(TensorPlan::describe).distinct().limit(2).collect(java.util.stream.Collectors.joining("; ")) + ")");
        }
        TensorPlan first = parts.getFirst();
        return new TensorPlan(g, new long[]{want[2], want[1], want[0]}, first.type(), first.choice(), first.source(), null, null,
                List.copyOf(parts));
    }

    /**
     * The GGUF tensors {@code parts} cut from fused source {@code t} ({@code [E, Σ rows, cols]}): part {@code i} is,
     * of every expert, the {@code rows_i} rows after those of the parts before it.
     */
    private static List<TensorPlan> split(Architecture arch, ConfigKeys.Dims d, JsonNode cfg, LogicalTensor t, List<String> parts,
                                          Predicate<LogicalTensor> f16Exact) {
        List<long[]> want = parts.stream().map(g -> expectedShape(arch, d, cfg, g)).toList();
        long total = want.stream().mapToLong(w -> w[1]).sum();
        long[] whole = {want.getFirst()[0], total, want.getFirst()[2]};
        if (!Arrays.equals(t.logicalShape(), whole)) {
            throw new IllegalArgumentException(t.relativeName() + " has shape " + Arrays.toString(t.logicalShape()) + ", config.json implies "
                    + Arrays.toString(whole));
        }
        List<TensorPlan> out = new ArrayList<>();
        long offset = 0;
        for (int i = 0; i < parts.size(); i++) {
            long[] w = want.get(i);
            long[] ne = {w[2], w[1], w[0]};
            TensorPlan p = choose(parts.get(i), ne, t, null, f16Exact);
            out.add(new TensorPlan(p.ggufName(), ne, p.type(), p.choice(), t, null, null, null, new RowSplit(total, offset, w[1])));
            offset += w[1];
        }
        return out;
    }

    private static boolean sameChoice(List<TensorPlan> parts) {
        return parts.stream().allMatch(p -> p.type() == parts.getFirst().type() && p.choice() == parts.getFirst().choice());
    }

    /** The HF shape config.json ({@code cfg}) implies for GGUF tensor {@code g} ({@link ArchSpec#layerShape} for per-layer ones). */
    static long[] expectedShape(Architecture a, ConfigKeys.Dims d, JsonNode cfg, String g) {
        Matcher m = LAYER.matcher(g);
        if (!m.matches()) {
            return switch (g) {
                case "token_embd.weight", "output.weight" -> new long[]{d.vocab(), d.hidden()};
                case "output_norm.weight" -> new long[]{d.hidden()};
                default -> a.spec().globalShape(g, cfg, d).orElseThrow(() -> new IllegalArgumentException("unexpected tensor " + g));
            };
        }
        if (Long.parseLong(m.group(1)) >= d.layers()) {
            throw new IllegalArgumentException(g + ": layer beyond num_hidden_layers " + d.layers());
        }
        String name = "scale".equals(m.group(3)) ? m.group(2) + ".scale" : m.group(2);   // a .scale tensor is asked by its whole name
        long[] w = a.spec().layerShape(name, Integer.parseInt(m.group(1)), cfg, d)
                .orElseThrow(() -> new IllegalArgumentException("unexpected tensor " + g));
        return "bias".equals(m.group(3)) ? new long[]{w[0]} : w;
    }

    /** Every tensor llama.cpp requires: the global ones, and in every layer those {@link ArchSpec#requiredInLayer} names. */
    private static void checkComplete(Architecture a, ConfigKeys.Dims d, JsonNode cfg, Set<String> names) {
        List<String> need = new ArrayList<>(List.of("token_embd.weight", "output_norm.weight"));
        need.addAll(a.spec().requiredGlobals(cfg));
        for (int l = 0; l < d.layers(); l++) {
            for (String r : a.spec().requiredInLayer(l, cfg)) {
                need.add("blk." + l + "." + r);
            }
        }
        for (String n : need) {
            if (!names.contains(n)) {
                throw new IllegalArgumentException("tensor " + n + " (GGUF name) missing; llama.cpp requires it");
            }
        }
    }

    /** File order: rope_freqs, token_embd, layers by number, output_norm, output. */
    private static String order(TensorPlan t) {
        Matcher m = LAYER.matcher(t.ggufName());
        if (m.matches()) {
            return "1" + String.format("%010d", Long.parseLong(m.group(1))) + m.group(2) + (m.group(3) == null ? "" : "." + m.group(3));
        }
        return switch (t.ggufName()) {
            case "rope_freqs.weight" -> "00";
            case "token_embd.weight" -> "01";
            case "output_norm.weight" -> "2";
            default -> "3" + t.ggufName();
        };
    }
}
