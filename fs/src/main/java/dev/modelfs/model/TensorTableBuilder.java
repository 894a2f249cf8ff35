package dev.modelfs.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.FormatException;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.format.safetensors.SafetensorsHeader;
import dev.modelfs.format.safetensors.TensorEntry;
import dev.modelfs.quant.mlx.MlxQuant;
import dev.modelfs.store.Digest;
import dev.modelfs.store.Layer;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.MediaType;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Builds a {@link TensorTable} from a manifest's tensor layers (docs/FORMATS.md §4.8), covering every blob
 * kind A–H: plain and combined quantized blobs, stacked and legacy packed experts, pre-quantized
 * fusions with {@code .global_scale}, {@code "data"}-keyed legacy blobs (including the v0.14–v0.15
 * {@code <name>}/{@code _scale}/{@code _qbias} layer triples), component-prefixed image-model keys and
 * draft tensors. Companions are recognised by the strict rule of §4.6.
 */
public final class TensorTableBuilder {
    private static final String DATA = "data";

    private final HeaderSource headers;
    private final Function<String, JsonNode> quantConfig;
    private final String fileTypeHint;
    private final String imageQuantization;
    private final DraftLayout draft;

    private final List<String> problems = new ArrayList<>();
    private final Set<String> disabled = new HashSet<>();

    /**
     * @param quantConfig  the {@code quantization} (or {@code quantization_config}) section of a
     *                     component's config.json, or null
     * @param fileTypeHint the config blob's {@code file_type} (e.g. {@code q4}), used only to break ties
     */
    public TensorTableBuilder(HeaderSource headers, Function<String, JsonNode> quantConfig, String fileTypeHint) {
        this(headers, quantConfig, fileTypeHint, null, null);
    }

    /**
     * @param imageQuantization the {@code quantization} of the model's {@code model_index.json} (an image
     *                          model), or null; gives the type of v0.14–v0.15 {@code "data"} triples
     *                          ({@link LegacyImageQuant})
     * @param draft where a draft imported with the model keeps its tensors (§4.3 H), or null: its
     *              tensors become the component {@link DraftLayout#component()}
     */
    public TensorTableBuilder(HeaderSource headers, Function<String, JsonNode> quantConfig, String fileTypeHint,
                              String imageQuantization, DraftLayout draft) {
        this.headers = headers;
        this.quantConfig = quantConfig;
        this.fileTypeHint = fileTypeHint;
        this.imageQuantization = imageQuantization;
        this.draft = draft;
    }

    public TensorTable build(Manifest m) {
        List<FoundTensor> found = new ArrayList<>();
        Set<String> seenBlobs = new HashSet<>();
        for (Layer l : m.layers(MediaType.Kind.TENSOR)) {
            if (l.digest().isEmpty() || l.name() == null) {
                problems.add("tensor layer without digest or name skipped");
                continue;
            }
            Digest d = l.digest().get();
            if (!seenBlobs.add(d.hex() + "\0" + l.name())) {
                continue;
            }
            try {
                SafetensorsHeader h = headers.header(d, l.size());
                readBlob(l, d, h, found, seenBlobs);
            } catch (IOException | FormatException | IllegalArgumentException | ArithmeticException e) {
                fail(componentOf(layerName(l.name())), "tensor blob " + d.shortId() + " (" + l.name() + "): " + e.getMessage());
            }
        }
        pairLegacyCompanions(found);
        ModelOptNvfp4.fuse(found);
        return new TensorTable(resolve(found), disabled, problems);
    }

    private void fail(String component, String why) {
        disabled.add(component);
        problems.add(why);
    }

    /** Tensor names become path components of views: no empty, "." or ".." segments, no leading "/", no control characters. */
    static boolean safeName(String name) {
        if (name.isEmpty() || name.startsWith("/") || name.length() > 4096) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            if (name.charAt(i) < 0x20 || name.charAt(i) == 0x7f) {
                return false;
            }
        }
        for (String seg : name.split("/", -1)) {
            if (seg.isEmpty() || seg.equals(".") || seg.equals("..")) {
                return false;
            }
        }
        return true;
    }

    /** A layer name as a logical name: a draft's {@code draft.x} is {@code draft/x}. */
    private String layerName(String name) {
        return draft != null && draft.owns(name) ? draft.logicalName(name) : name;
    }

    static String componentOf(String name) {
        int i = name.indexOf('/');
        return i < 0 ? "" : name.substring(0, i);
    }

    private void readBlob(Layer l, Digest d, SafetensorsHeader h, List<FoundTensor> out, Set<String> seenBlobs) {
        Map<String, TensorEntry> byKey = new LinkedHashMap<>();
        for (TensorEntry e : h.tensors()) {
            if (!safeName(e.name())) {
                throw new FormatException("hostile tensor name " + dev.modelfs.format.Quoting.quote(e.name()));
            }
            byKey.put(e.name(), e);
        }
        // §4.6: companions only where the base exists in the same blob and is a U32 quantized weight
        Set<String> companions = new HashSet<>();
        for (String k : byKey.keySet()) {
            TensorEntry base;
            if (k.endsWith(".scale") && (base = byKey.get(k.substring(0, k.length() - 6))) != null && base.dtype() == Dtype.U32) {
                companions.add(k);
                String bias = k.substring(0, k.length() - 6) + ".bias";
                if (byKey.containsKey(bias)) {
                    companions.add(bias);
                }
            }
            if (k.endsWith(".global_scale") && (base = byKey.get(k.substring(0, k.length() - 13))) != null && base.dtype() == Dtype.U32
                    && byKey.get(k).dtype() == Dtype.F32 && QuantResolver.globalScaleShape(base.shape(), byKey.get(k).shape())) {
                companions.add(k);
            }
        }
        List<String> mains = byKey.keySet().stream().filter(k -> !companions.contains(k)).toList();
        boolean legacyData = mains.size() == 1 && mains.getFirst().equals(DATA);
        if (!legacyData) {
            // a blob keyed by names is read once however many layers point at it
            if (!seenBlobs.add(d.hex())) {
                return;
            }
        }
        String prefix = l.name().contains("/") ? componentOf(l.name()) + "/" : "";
        for (String k : mains) {
            String logical = legacyData ? layerName(l.name()) : draft != null && draft.owns(k) ? draft.logicalName(k)
                    : !prefix.isEmpty() && !k.startsWith(prefix) ? prefix + k : k;
            out.add(new FoundTensor(logical, l, k, stored(d, l.size(), h, byKey.get(k)), stored(d, l.size(), h, byKey.get(k + ".scale"), companions),
                    stored(d, l.size(), h, byKey.get(k + ".bias"), companions),
                    stored(d, l.size(), h, byKey.get(k + ".global_scale"), companions), h.metadata(), legacyData));
        }
    }

    private static StoredTensor stored(Digest d, long blobSize, SafetensorsHeader h, TensorEntry e, Set<String> companions) {
        return e == null || !companions.contains(e.name()) ? null : stored(d, blobSize, h, e);
    }

    private static StoredTensor stored(Digest d, long blobSize, SafetensorsHeader h, TensorEntry e) {
        long off = Math.addExact(h.dataStart(), e.begin());
        return new StoredTensor(e.name(), e.dtype(), e.shape(), new BlobRange(d, blobSize, off, e.byteLength()));
    }

    /** v0.14–v0.15: {@code <name>_scale} / {@code <name>_qbias} "data" layers are companions of {@code <name>}. */
    private void pairLegacyCompanions(List<FoundTensor> found) {
        Map<String, Integer> legacy = new HashMap<>();
        for (int i = 0; i < found.size(); i++) {
            if (found.get(i).legacyData()) {
                legacy.putIfAbsent(found.get(i).logicalName(), i);
            }
        }
        Set<Integer> consumed = new HashSet<>();
        for (int i = 0; i < found.size(); i++) {
            FoundTensor f = found.get(i);
            if (!f.legacyData() || f.main().dtype() != Dtype.U32) {
                continue;
            }
            Integer s = legacy.get(f.logicalName() + "_scale");
            if (s == null) {
                continue;
            }
            Integer b = legacy.get(f.logicalName() + "_qbias");
            found.set(i, f.with(f.main(), found.get(s).main(), b == null ? null : found.get(b).main(), f.globalScale()));
            consumed.add(s);
            if (b != null) {
                consumed.add(b);
            }
        }
        FoundTensor.removeAll(found, consumed);
    }

    private List<LogicalTensor> resolve(List<FoundTensor> found) {
        List<LogicalTensor> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (FoundTensor f : found) {
            String component = componentOf(f.logicalName());
            String relative = component.isEmpty() ? f.logicalName() : f.logicalName().substring(component.length() + 1);
            if (!names.add(f.logicalName())) {
                problems.add("duplicate tensor " + f.logicalName() + " ignored");
                continue;
            }
            if (f.scale() == null) {
                out.add(new LogicalTensor(f.logicalName(), component, relative, f.main(), null, null, null, null, f.main().shape()));
                continue;
            }
            MlxQuant q = QuantResolver.resolve(new QuantResolver.Pieces(f.key(), f.main(), f.scale(), f.bias(), f.globalScale(),
                    f.metadata(), quantConfig.apply(component), relative, fileTypeHint, f.legacyData(),
                    component.isEmpty() ? null : imageQuantization));
            if (q == null) {
                fail(component, "cannot tell how " + f.logicalName() + " is quantized (shapes/dtypes match no known type)");
                continue;
            }
            long[] shape = f.main().shape();
            shape[shape.length - 1] = shape[shape.length - 1] * 32 / q.bits();
            out.add(new LogicalTensor(f.logicalName(), component, relative, f.main(), f.scale(), f.bias(), f.globalScale(), q, shape));
        }
        return out;
    }
}
