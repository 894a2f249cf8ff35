package dev.modelfs.view;

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

/**
 * Completes the dtype variant folders {@code fp32/}, {@code fp16/}, {@code bf16/} of a model directory
 * (docs/SEMANTICS.md "One weight set per folder"). The other views place each variant's weights there
 * under the plain names ({@link OutputType#inFolder}: {@code bf16/model.safetensors},
 * {@code bf16/transformer/diffusion_pytorch_model.safetensors}); this view, registered last, copies
 * every other file a loader reads beside them (configs, tokenizer, {@code model_index.json},
 * {@code scheduler/} …) from the model directory into each variant folder, so that
 * {@code from_pretrained(dir + "/bf16")} needs no flags.
 *
 * <p>Invariants: only variant folders another view created are completed; copied are the files
 * outside {@code ollama/}, {@code tensors/}, {@code gguf/} and the variant folders that are neither
 * weights ({@code *.safetensors}) nor GGUF files; a copy of a blob file is the same node (same inode,
 * as everywhere a blob appears), any other copy gets the inode of its own path.
 */
public final class VariantFolders implements ModelView {
    private static final Set<String> NOT_COPIED = Set.of("ollama", "tensors", "gguf");
    private static final List<String> VARIANTS = Arrays.stream(OutputType.values()).map(o -> o.variant).toList();

    @Override
    public void addTo(ModelContext ctx, List<ModelTable> tables, TreeBuilder tree) {
        List<String> present = VARIANTS.stream().filter(tree::hasDirectory).toList();
        if (present.isEmpty()) {
            return;
        }
        for (Map.Entry<String, FileNode> e : tree.files().entrySet()) {
            String path = e.getKey();
            String top = path.contains("/") ? path.substring(0, path.indexOf('/')) : "";
            if (NOT_COPIED.contains(top) || VARIANTS.contains(top) || path.endsWith(".safetensors") || path.endsWith(".gguf")) {
                continue;
            }
            FileNode f = e.getValue();
            for (String v : present) {
                String copy = v + "/" + path;
                tree.put(copy, f.xattrs().containsKey("user.modelfs.digest") ? f
                        : new FileNode(ctx.inodeOf(copy), f.mtimeNanos(), f.source(), f.xattrs()));
            }
        }
    }
}
