package dev.modelfs.view;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.Segment;
import dev.modelfs.convert.OutputType;
import dev.modelfs.model.ModelTable;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.ModelContext;
import dev.modelfs.tree.ModelView;
import dev.modelfs.tree.TreeBuilder;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Completes the dtype variant folders {@code fp32/}, {@code fp16/}, {@code bf16/} of a model directory
 * (docs/SEMANTICS.md "One weight set per folder"). The other views place each variant's weights there
 * under the plain names ({@link OutputType#inFolder}: {@code bf16/model.safetensors},
 * {@code bf16/transformer/diffusion_pytorch_model.safetensors}); this view, registered last, copies
 * every other file a loader reads beside them (configs, tokenizer, {@code model_index.json},
 * {@code scheduler/} …) from the model directory into each variant folder, so that
 * {@code from_pretrained(dir + "/bf16")} needs no flags.
 *
 * <p>Invariants: only variant folders another view created are completed (in the model directory, or in
 * a model folder inside it such as a GGUF draft's {@code draft/}, whose own files are then not copied
 * into the top folder's variants); copied are the files
 * outside {@code ollama/}, {@code tensors/}, {@code gguf/} and the variant folders that are neither
 * weights ({@code *.safetensors}) nor GGUF files; a copy of a blob file is the same node (same inode,
 * as everywhere a blob appears), any other copy gets the inode of its own path; a {@code config.json} that names a
 * dtype gets that folder's ({@link VariantConfig}).
 */
public final class VariantFolders implements ModelView {
    private static final Set<String> NOT_COPIED = Set.of("ollama", "tensors", "gguf");
    private static final List<String> VARIANTS = Arrays.stream(OutputType.values()).map(o -> o.variant).toList();

    @Override
    public void addTo(ModelContext ctx, List<ModelTable> tables, TreeBuilder tree) {
        Map<String, FileNode> files = tree.files();
        Set<String> holders = holders(files.keySet());
        for (String holder : holders) {
            List<String> present = VARIANTS.stream().filter(v -> tree.hasDirectory(holder + v)).toList();
            for (Map.Entry<String, FileNode> e : files.entrySet()) {
                String path = e.getKey();
                if (!path.startsWith(holder) || insideNestedHolder(path, holder, holders)) {
                    continue;
                }
                String rel = path.substring(holder.length());
                String top = rel.contains("/") ? rel.substring(0, rel.indexOf('/')) : "";
                if (NOT_COPIED.contains(top) || VARIANTS.contains(top) || rel.endsWith(".safetensors") || rel.endsWith(".gguf")) {
                    continue;
                }
                FileNode f = e.getValue();
                JsonNode config = VariantConfig.applies(rel) ? config(f, rel, tables) : null;
                for (String v : present) {
                    String copy = holder + v + "/" + rel;
                    byte[] retyped = VariantConfig.rewrite(config, OutputType.ofVariant(v));
                    if (retyped != null) {
                        tree.put(copy, new FileNode(ctx.inodeOf(copy), f.mtimeNanos(), ByteSource.literal(retyped),
                                Map.of("user.modelfs.source", path + " with its dtype set to " + v)));
                    } else {
                        tree.put(copy, f.xattrs().containsKey("user.modelfs.digest") ? f
                                : new FileNode(ctx.inodeOf(copy), f.mtimeNanos(), f.source(), f.xattrs()));
                    }
                }
            }
        }
    }

    /**
     * The JSON of the config file {@code f} at {@code rel}: its bytes when it is a synthesized file held in memory,
     * else (a config layer's blob) the copy the model's tables read while the directory was built; null otherwise.
     */
    private static JsonNode config(FileNode f, String rel, List<ModelTable> tables) {
        ByteSource src = f.source();
        if (src.segmentCount() == 1 && src.segment(0) instanceof Segment.Literal(byte[] bytes)) {
            return VariantConfig.parse(bytes);
        }
        String component = rel.equals(VariantConfig.NAME) ? "" : rel.substring(0, rel.length() - VariantConfig.NAME.length() - 1);
        for (ModelTable t : tables) {
            if (t instanceof ModelTable.Safetensors s && s.configs() != null && s.configs().get(component) != null) {
                return s.configs().get(component);
            }
        }
        return null;
    }

    /**
     * The folders ({@code ""} or ending in {@code /}) that hold variant folders: the model directory, and a
     * model folder inside it such as a GGUF draft layer's {@code draft/} (its weights at {@code draft/bf16/});
     * never one inside {@code ollama/}, {@code tensors/} or {@code gguf/}.
     */
    private static Set<String> holders(Set<String> paths) {
        Set<String> out = new TreeSet<>();
        for (String path : paths) {
            String[] parts = path.split("/");
            for (int i = 0; i < parts.length - 1 && !NOT_COPIED.contains(parts[i]); i++) {
                if (VARIANTS.contains(parts[i])) {
                    out.add(String.join("/", Arrays.copyOf(parts, i)) + (i == 0 ? "" : "/"));
                    break;
                }
            }
        }
        return out;
    }

    /** Whether {@code path} lies in a holder nested inside {@code holder}: that one completes its own variants. */
    private static boolean insideNestedHolder(String path, String holder, Set<String> holders) {
        for (String h : holders) {
            if (h.length() > holder.length() && h.startsWith(holder) && path.startsWith(h)) {
                return true;
            }
        }
        return false;
    }
}
