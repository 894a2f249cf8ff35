package dev.modelfs.view;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.format.ElementTypes;
import dev.modelfs.format.FormatException;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.format.safetensors.SafetensorsWriter;
import dev.modelfs.model.BlobRange;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.model.TensorTable;
import dev.modelfs.model.TensorTableBuilder;
import dev.modelfs.quant.ggml.GgmlDequantizers;
import dev.modelfs.store.Layer;
import dev.modelfs.store.MediaType;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Logger;

/**
 * Reassembled safetensors for safetensors-based models (docs/DESIGN.md §1): per component
 * {@code [c/]<weights>.safetensors} with every tensor as stored (packed codes and their companions)
 * and {@code [c/]<weights>.{fp32,fp16,bf16}.safetensors} with the logical tensors dequantized or cast.
 * Every file carries {@code __metadata__ {"format":"pt"}} so transformers and diffusers accept it.
 */
public final class SafetensorsModelView implements ModelView {
    private static final Logger LOG = Logger.getLogger(SafetensorsModelView.class.getName());
    private static final ObjectMapper JSON = new ObjectMapper();

    @Override
    public void addTo(ModelContext ctx, TreeBuilder tree) {
        if (ctx.manifest().first(MediaType.Kind.TENSOR) == null) {
            return;
        }
        Map<String, JsonNode> configs = componentConfigs(ctx);
        TensorTable table = tensorTable(ctx, configs);
        for (String p : table.problems()) {
            LOG.warning(ctx.manifest().name() + ": " + p);
        }
        table.byComponent().forEach((component, tensors) -> {
            String dir = component.isEmpty() ? "" : component + "/";
            JsonNode cfg = configs.get(component);
            String weights = cfg != null && cfg.has("_class_name") ? "diffusion_pytorch_model" : "model";
            try {
                ViewFiles.put(ctx, tree, dir + weights + ".safetensors", asStored(tensors), "tensors as stored");
                for (OutputType out : OutputType.values()) {
                    ViewFiles.put(ctx, tree, dir + weights + "." + out.variant + ".safetensors", converted(tensors, out),
                            "logical tensors as " + out.dtype);
                }
            } catch (FormatException | IllegalArgumentException | ArithmeticException e) {
                LOG.warning(ctx.manifest().name() + ": component '" + component + "' left out: " + e.getMessage());
            }
        });
    }

    /** The model's tensor table, read the way the views read it (also used by {@code modelfs show}). */
    public static TensorTable tensorTable(ModelContext ctx) {
        return tensorTable(ctx, componentConfigs(ctx));
    }

    private static TensorTable tensorTable(ModelContext ctx, Map<String, JsonNode> configs) {
        BlobHeaders headers = new BlobHeaders(ctx.store());
        return new TensorTableBuilder(headers::safetensors, c -> quantSection(configs, c), ctx.config().fileType())
                .build(ctx.manifest());
    }

    /** config.json of each component that has one (root: "config.json"). */
    private static Map<String, JsonNode> componentConfigs(ModelContext ctx) {
        Map<String, JsonNode> out = new HashMap<>();
        for (Layer l : ctx.manifest().layers(MediaType.Kind.JSON)) {
            if (l.name() == null || l.digest().isEmpty()) {
                continue;
            }
            String component;
            if (l.name().equals("config.json")) {
                component = "";
            } else if (l.name().endsWith("/config.json") && l.name().indexOf('/') == l.name().length() - "/config.json".length()) {
                component = l.name().substring(0, l.name().indexOf('/'));
            } else {
                continue;
            }
            try {
                JsonNode n = JSON.readTree(ctx.store().readSmallBlob(l.digest().get(), 16 << 20));
                if (n != null && n.isObject()) {
                    out.put(component, n);
                }
            } catch (IOException e) {
                LOG.warning(ctx.manifest().name() + ": cannot read " + l.name() + ": " + e.getMessage());
            }
        }
        return out;
    }

    private static JsonNode quantSection(Map<String, JsonNode> configs, String component) {
        JsonNode c = configs.getOrDefault(component, configs.get(""));
        if (c == null) {
            return null;
        }
        JsonNode q = c.get("quantization");
        return q != null && q.isObject() ? q : c.get("quantization_config");
    }

    private static ByteSource asStored(List<LogicalTensor> tensors) {
        List<SafetensorsWriter.Spec> specs = new ArrayList<>();
        Map<String, Segment> bytes = new HashMap<>();
        Map<String, String> metadata = new LinkedHashMap<>();
        metadata.put("format", "pt");
        for (LogicalTensor t : tensors) {
            add(specs, bytes, t.relativeName(), t.main());
            if (t.quantized()) {
                add(specs, bytes, t.relativeName() + ".scale", t.scale());
                if (t.bias() != null) {
                    add(specs, bytes, t.relativeName() + ".bias", t.bias());
                }
                if (t.globalScale() != null) {
                    add(specs, bytes, t.relativeName() + ".global_scale", t.globalScale());
                }
                metadata.put(t.relativeName() + ".quant_type", t.quant().canonicalName());
                metadata.put(t.relativeName() + ".group_size", Integer.toString(t.quant().groupSize()));
            }
        }
        return ViewFiles.safetensors(specs, metadata, bytes);
    }

    private static Segment slice(BlobRange r) {
        return new Segment.BlobSlice(new BlobRef(r.blob(), r.blobSize()), r.offset(), r.length());
    }

    private static void add(List<SafetensorsWriter.Spec> specs, Map<String, Segment> bytes, String name, StoredTensor s) {
        specs.add(new SafetensorsWriter.Spec(name, s.dtype(), s.shape()));
        if (bytes.put(name, slice(s.bytes())) != null) {
            throw new FormatException("two tensors named " + name);
        }
    }

    private static ByteSource converted(List<LogicalTensor> tensors, OutputType out) {
        List<SafetensorsWriter.Spec> specs = new ArrayList<>();
        Map<String, Segment> data = new HashMap<>();
        for (LogicalTensor t : tensors) {
            StoredTensor m = t.main();
            Dtype dtype;
            Segment seg;
            if (t.quantized()) {
                dtype = out.dtype;
                seg = new Segment.Converted(new MlxConverted(t, out));
            } else if (m.dtype().isFloat() && m.dtype() != out.dtype) {
                dtype = out.dtype;
                seg = new Segment.Converted(new BlockConverted(new BlobRef(m.bytes().blob(), m.bytes().blobSize()),
                        m.bytes().offset(), m.numel(), GgmlDequantizers.forType(ElementTypes.ggml(m.dtype()).orElseThrow()), out, t.name()));
            } else {
                dtype = m.dtype();
                seg = slice(m.bytes());
            }
            specs.add(new SafetensorsWriter.Spec(t.relativeName(), dtype, t.logicalShape()));
            if (data.put(t.relativeName(), seg) != null) {
                throw new FormatException("two tensors named " + t.relativeName());
            }
        }
        return ViewFiles.safetensors(specs, Map.of("format", "pt"), data);
    }
}
