package dev.modelfs.tree;

import dev.modelfs.bytes.ByteSource;
import java.util.Map;

/** What every converted-file view does the same way: place a synthesized file (assembly: {@link dev.modelfs.bytes.FileAssembly}). */
public final class ViewFiles {
    private ViewFiles() {}

    /** Places a synthesized file (inode from the model's manifest digest and the path). */
    public static void put(ModelContext ctx, TreeBuilder tree, String path, ByteSource src, String what) {
        tree.put(path, new FileNode(ctx.inodeOf(path), ctx.mtimeNanos(), src, Map.of("user.modelfs.source", what)));
    }
}
