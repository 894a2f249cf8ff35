package dev.modelfs.view;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Completes the dtype variant folders {@code fp32/}, {@code fp16/}, {@code bf16/} of a model directory
 * (docs/SEMANTICS.md "One weight set per folder"): the views place each variant's weights there under
 * the plain names ({@code bf16/model.safetensors}, {@code bf16/transformer/diffusion_pytorch_model.safetensors});
 * this copies every other file a loader reads beside them (configs, tokenizer, {@code model_index.json},
 * {@code scheduler/} …) from the model directory into each variant folder, so that
 * {@code from_pretrained(dir + "/bf16")} needs no flags.
 *
 * <p>Invariants: only folders the views created are completed; copied are the files outside
 * {@code ollama/}, {@code tensors/}, {@code gguf/} and the variant folders that are neither weights
 * ({@code *.safetensors}) nor GGUF files; a copy of a blob file is the same node (same inode, as
 * everywhere a blob appears), any other copy gets the inode of its own path.
 */
final class VariantFolders {
    private static final Set<String> NOT_COPIED = Set.of("ollama", "tensors", "gguf");

    private VariantFolders() {}

    /** The variant folder names, in {@link OutputType} order. */
    static List<String> names() {
        return java.util.Arrays.stream(OutputType.values()).map(o -> o.variant).toList();
    }

    /** The path of a variant's copy of {@code path} (relative to the model directory). */
    static String in(OutputType out, String path) {
        return out.variant + "/" + path;
    }

    static void complete(ModelContext ctx, TreeBuilder tree) {
        List<String> variants = names().stream().filter(tree::hasDirectory).toList();
        if (variants.isEmpty()) {
            return;
        }
        for (Map.Entry<String, FileNode> e : tree.files().entrySet()) {
            String path = e.getKey();
            String top = path.contains("/") ? path.substring(0, path.indexOf('/')) : "";
            if (NOT_COPIED.contains(top) || names().contains(top) || path.endsWith(".safetensors") || path.endsWith(".gguf")) {
                continue;
            }
            for (String v : variants) {
                String copy = v + "/" + path;
                FileNode f = e.getValue();
                tree.put(copy, f.xattrs().containsKey("user.modelfs.digest") ? f
                        : new FileNode(ctx.inodeOf(copy), f.mtimeNanos(), f.source(), f.xattrs()));
            }
        }
    }
}
