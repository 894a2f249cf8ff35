package dev.modelfs.view.safetensors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.FileAssembly;
import dev.modelfs.bytes.Segment;
import dev.modelfs.convert.OutputType;
import dev.modelfs.convert.UnitConverted;
import dev.modelfs.format.ElementTypes;
import dev.modelfs.format.FormatException;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.format.safetensors.SafetensorsWriter;
import dev.modelfs.model.BlobRange;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.ModelTable;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.model.TensorTable;
import dev.modelfs.quant.ggml.GgmlDequantizers;
import dev.modelfs.tree.ModelContext;
import dev.modelfs.tree.ModelView;
import dev.modelfs.tree.TreeBuilder;
import dev.modelfs.tree.ViewFiles;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Logger;

/**
 * Reassembled safetensors for safetensors-based models (docs/DESIGN.md §1): per component
 * {@code [c/]<weights>.safetensors} with every tensor as stored (packed codes and their companions)
 * and, in the variant folders, {@code {fp32,fp16,bf16}/[c/]<weights>.safetensors} with the logical
 * tensors dequantized or cast ({@code dev.modelfs.view.VariantFolders} adds the configs beside them).
 * Every file carries {@code __metadata__ {"format":"pt"}} so transformers and diffusers accept it.
 */
public final class SafetensorsModelView implements ModelView {
    private static final Logger LOG = Logger.getLogger(SafetensorsModelView.class.getName());

    @Override
    public void addTo(ModelContext ctx, List<ModelTable> tables, TreeBuilder tree) {
        for (ModelTable t : tables) {
            if (t instanceof ModelTable.Safetensors s) {
                addTo(ctx, s, tree);
            }
        }
    }

    private static void addTo(ModelContext ctx, ModelTable.Safetensors model, TreeBuilder tree) {
        TensorTable table = model.table();
        for (String p : table.problems()) {
            LOG.warning(ctx.manifest().name() + ": " + p);
        }
        table.byComponent().forEach((component, tensors) -> {
            String dir = component.isEmpty() ? "" : component + "/";
            JsonNode cfg = model.configs().get(component);
            String weights = cfg != null && cfg.has("_class_name") ? "diffusion_pytorch_model" : "model";
            try {
                BlobRefs refs = new BlobRefs();
                ByteSource stored = asStored(tensors, refs);
                ViewFiles.put(ctx, tree, dir + weights + ".safetensors", stored, "tensors as stored");
                for (OutputType out : OutputType.values()) {
                    ViewFiles.put(ctx, tree, out.inFolder(dir + weights + ".safetensors"), converted(tensors, out, refs, stored),
                            "logical tensors as " + out.dtype);
                }
            } catch (FormatException | IllegalArgumentException | ArithmeticException e) {
                LOG.warning(ctx.manifest().name() + ": component '" + component + "' left out: " + e.getMessage());
            }
        });
    }

    /** One {@link BlobRef} per blob for all the files of a component, not one per tensor and file. */
    private static final class BlobRefs {
        private final Map<BlobRef, BlobRef> refs = new HashMap<>();

        BlobRef of(BlobRange r) {
            return refs.computeIfAbsent(new BlobRef(r.blob(), r.blobSize()), k -> k);
        }

        Segment slice(BlobRange r) {
            return new Segment.BlobSlice(of(r), r.offset(), r.length());
        }
    }

    private static ByteSource asStored(List<LogicalTensor> tensors, BlobRefs refs) {
        List<SafetensorsWriter.Spec> specs = new ArrayList<>();
        Map<String, Segment> bytes = new HashMap<>();
        Map<String, String> metadata = new LinkedHashMap<>();
        metadata.put("format", "pt");
        for (LogicalTensor t : tensors) {
            add(specs, bytes, t.relativeName(), t.main(), refs);
            if (t.quantized()) {
                add(specs, bytes, t.relativeName() + ".scale", t.scale(), refs);
                if (t.bias() != null) {
                    add(specs, bytes, t.relativeName() + ".bias", t.bias(), refs);
                }
                if (t.globalScale() != null) {
                    add(specs, bytes, t.relativeName() + ".global_scale", t.globalScale(), refs);
                }
                metadata.put(t.relativeName() + ".quant_type", t.quant().canonicalName());
                metadata.put(t.relativeName() + ".group_size", Integer.toString(t.quant().groupSize()));
            }
        }
        return FileAssembly.safetensors(specs, metadata, bytes);
    }

    private static void add(List<SafetensorsWriter.Spec> specs, Map<String, Segment> bytes, String name, StoredTensor s, BlobRefs refs) {
        specs.add(new SafetensorsWriter.Spec(name, s.dtype(), s.shape()));
        if (bytes.put(name, refs.slice(s.bytes())) != null) {
            throw new FormatException("two tensors named " + name);
        }
    }

    /** A variant file; its header shares {@code stored}'s bytes when they are equal (unquantized tensors already in {@code out}). */
    private static ByteSource converted(List<LogicalTensor> tensors, OutputType out, BlobRefs refs, ByteSource stored) {
        List<SafetensorsWriter.Spec> specs = new ArrayList<>();
        Map<String, Segment> data = new HashMap<>();
        for (LogicalTensor t : tensors) {
            StoredTensor m = t.main();
            Dtype dtype;
            Segment seg;
            if (t.quantized()) {
                dtype = out.dtype;
                seg = new Segment.Converted(UnitConverted.mlx(t, out));
            } else if (m.dtype().isFloat() && m.dtype() != out.dtype) {
                dtype = out.dtype;
                seg = new Segment.Converted(UnitConverted.blocks(refs.of(m.bytes()),
                        m.bytes().offset(), m.numel(), GgmlDequantizers.forType(ElementTypes.ggml(m.dtype()).orElseThrow()), out, t.name()));
            } else {
                dtype = m.dtype();
                seg = refs.slice(m.bytes());
            }
            specs.add(new SafetensorsWriter.Spec(t.relativeName(), dtype, t.logicalShape()));
            if (data.put(t.relativeName(), seg) != null) {
                throw new FormatException("two tensors named " + t.relativeName());
            }
        }
        return FileAssembly.safetensors(specs, Map.of("format", "pt"), data, stored);
    }
}
