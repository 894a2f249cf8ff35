package dev.modelfs.hf;

import dev.modelfs.arch.Architecture;
import dev.modelfs.arch.Assembly;
import dev.modelfs.arch.TensorNames;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufTensorInfo;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The HF tensors of a GGUF model that an architecture's {@link Assembly assemblies} make (docs/FORMATS.md §7.3):
 * per layer, an assembly whose GGUF tensors are all there gives one {@link HfTensor} (a plain one for a
 * rename, an {@link HfTensor.Assembled} one otherwise); a layer with none of them has none (dense layers of a
 * MoE model); a layer with some of them is refused. A layer whose HF name a {@code LayerRule} already gives
 * (DeepSeek GGUFs that keep {@code attn_kv_b} beside {@code attn_k_b}/{@code attn_v_b}) keeps that one; the rules
 * of a row split's own parts (GraniteMoe's {@code input_linear}) do not count.
 *
 * <p>Invariants: {@link Result#consumed} holds every GGUF tensor an assembly of the architecture names, so the
 * caller maps none of them itself; shapes and geometries are checked here, so the view can lay the file out.
 */
final class HfAssemblies {
    private HfAssemblies() {
    }

    private static final Pattern LAYER = Pattern.compile("blk\\.(0|[1-9][0-9]{0,8})\\.(.+)");

    /** The assembled tensors and the GGUF tensors they use. */
    record Result(List<HfTensor> tensors, Set<String> consumed) {
    }

    static Result of(GgufFile g, Architecture arch) {
        List<Assembly> assemblies = arch.spec().assemblies();
        List<HfTensor> out = new ArrayList<>();
        Set<String> consumed = new HashSet<>();
        if (assemblies.isEmpty()) {
            return new Result(out, consumed);
        }
        Set<Integer> layers = new TreeSet<>();
        for (GgufTensorInfo t : g.tensors()) {
            Matcher m = LAYER.matcher(t.name());
            if (m.matches()) {
                layers.add(Integer.parseInt(m.group(1)));
            }
        }
        for (int n : layers) {
            String blk = "blk." + n + ".";
            for (Assembly a : assemblies) {
                List<String> names = a.gguf().stream().map(s -> blk + s).toList();
                long present = names.stream().filter(s -> g.tensor(s) != null).count();
                consumed.addAll(names);
                if (present == 0) {
                    continue;
                }
                if (present < names.size()) {
                    throw new HfUnsupported("GGUF layer " + n + " has only some of " + String.join(", ", names)
                            + " (together Hugging Face's " + a.hf() + ")");
                }
                String hf = arch.spec().hfLayerPrefix() + n + "." + a.hf();
                if (ruleMapped(g, arch, hf, names)) {
                    continue;
                }
                out.add(a.isRename() ? renamed(g.tensor(names.getFirst()), hf, a.layout()) : assembled(g, a, blk, hf));
            }
        }
        return new Result(out, consumed);
    }

    /** Whether a GGUF tensor other than the assembly's own {@code parts} (a row split's rules name it) maps to {@code hf}. */
    private static boolean ruleMapped(GgufFile g, Architecture arch, String hf, List<String> parts) {
        return g.tensors().stream().anyMatch(t -> !parts.contains(t.name())
                && TensorNames.toHf(arch, t.name()).filter(hf::equals).isPresent());
    }

    private static HfTensor renamed(GgufTensorInfo t, String hf, Assembly.Layout layout) {
        long[] geo = HfTensor.Assembled.geometry(t);
        long rows = t.rank() <= 1 ? t.ne()[0] : t.elements() / t.ne()[0];
        return new HfTensor(hf, t, shape(layout, geo[0], geo[1], geo[2]), 0, t.byteSize(), rows, null);
    }

    private static HfTensor assembled(GgufFile g, Assembly a, String blk, String hf) {
        List<HfTensor.Assembled.Part> parts = new ArrayList<>();
        long batches = -1, cols = -1, rows = 0;
        for (Assembly.Part p : a.parts()) {
            List<GgufTensorInfo> sources = p.gguf().stream().map(s -> g.tensor(blk + s)).toList();
            long[] geo = HfTensor.Assembled.geometry(sources.getFirst());
            for (GgufTensorInfo s : sources) {
                if (!java.util.Arrays.equals(geo, HfTensor.Assembled.geometry(s))) {
                    throw new HfUnsupported("GGUF tensors " + String.join(", ", p.gguf()) + " of layer " + blk
                            + " differ in shape (together Hugging Face's " + hf + ")");
                }
            }
            long partRows = p.transposed() ? geo[2] : geo[1] * sources.size();
            long partCols = p.transposed() ? geo[1] * sources.size() : geo[2];
            if ((batches >= 0 && batches != geo[0]) || (cols >= 0 && cols != partCols)) {
                throw new HfUnsupported("GGUF tensors of " + hf + " do not fit together (batches " + geo[0] + ", rows of " + partCols + ")");
            }
            batches = geo[0];
            cols = partCols;
            rows += partRows;
            parts.add(new HfTensor.Assembled.Part(sources, p.transposed()));
        }
        GgufTensorInfo first = parts.getFirst().sources().getFirst();
        return new HfTensor(hf, first, shape(a.layout(), batches, rows, cols), 0, first.byteSize(), batches * rows, null, 0f,
                0L, new HfTensor.Assembled(batches, parts));
    }

    /**
     * The HF tensor of translated 2-D tensor {@code t} whose rows are those of the blob tensors {@code parts}, one after
     * another (a dialect translation's concatenation, {@code dev.modelfs.dialect.TensorOp.Concat}): one batch of each
     * part's rows, gathered as stored. Refused unless the parts have {@code t}'s type and row width and together its rows,
     * and unless the HF tensor is {@code t}'s values unchanged (no permuted rows, no shift).
     */
    static HfTensor concatenation(Architecture arch, GgufTensorInfo t, List<GgufTensorInfo> parts) {
        String hf = TensorNames.toHf(arch, t.name()).orElseThrow(
                () -> new HfUnsupported("GGUF tensor " + t.name() + " has no Hugging Face name for " + arch.ggufName()));
        if (t.rank() != 2 || parts.isEmpty() || TensorNames.permutation(arch, t.name()).isPresent()
                || TensorNames.storedShift(arch, t.name()) != 0) {
            throw new HfUnsupported("GGUF tensor " + t.name() + " is a concatenation the folder cannot read as stored rows");
        }
        List<HfTensor.Assembled.Part> out = new ArrayList<>();
        long rows = 0;
        for (GgufTensorInfo p : parts) {
            if (p == null || p.rank() != 2 || p.type() != t.type() || p.ne()[0] != t.ne()[0]) {
                throw new HfUnsupported("GGUF tensor " + t.name() + ": a concatenated part is not a " + t.type() + " matrix of rows of "
                        + t.ne()[0]);
            }
            rows += p.ne()[1];   // one batch of the part's rows: [cols, rows, 1]
            out.add(new HfTensor.Assembled.Part(List.of(new GgufTensorInfo(p.name(), new long[] {p.ne()[0], p.ne()[1], 1}, p.type(),
                    p.offset())), false));
        }
        if (rows != t.ne()[1]) {
            throw new HfUnsupported("GGUF tensor " + t.name() + " has " + t.ne()[1] + " rows, its parts " + rows);
        }
        GgufTensorInfo first = out.getFirst().sources().getFirst();
        return new HfTensor(hf, first, t.shape(), 0, first.byteSize(), rows, null, 0f, 0L, new HfTensor.Assembled(1, out));
    }

    /** The HF shape of {@code batches} matrices of {@code rows × cols} laid out as {@code layout}. */
    static long[] shape(Assembly.Layout layout, long batches, long rows, long cols) {
        return switch (layout) {
            case VECTOR -> new long[] {batches * rows * cols};
            case ROWS -> new long[] {batches * rows, cols};
            case STACKED -> rows == 1 ? new long[] {batches, cols} : cols == 1 ? new long[] {batches, rows} : new long[] {batches, rows, cols};
        };
    }
}
