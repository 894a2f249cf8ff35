package dev.modelfs.fuse;

import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.Node;
import dev.modelfs.tree.StoreTree;

/**
 * FUSE paths resolved in the current {@link StoreTree} snapshot: {@code /a/b/c} walked from the root one name at a
 * time; empty components (a doubled or trailing slash) are skipped.
 *
 * <p>Invariants: reads one snapshot's nodes, never the store; {@code null}, {@code ""} and {@code "/"} are the root;
 * a path through a file, or a missing name, is null.
 */
final class TreePaths {
    private TreePaths() {}

    /** The node at absolute FUSE path {@code path} in {@code tree}'s current snapshot, or null. */
    static Node resolve(StoreTree tree, String path) {
        Node n = tree.root();
        if (path == null || path.equals("/") || path.isEmpty()) {
            return n;
        }
        int i = path.charAt(0) == '/' ? 1 : 0;
        while (i < path.length()) {
            int j = path.indexOf('/', i);
            if (j < 0) {
                j = path.length();
            }
            if (j > i) {
                if (!(n instanceof DirNode d)) {
                    return null;
                }
                n = d.child(path.substring(i, j));
                if (n == null) {
                    return null;
                }
            }
            i = j + 1;
        }
        return n;
    }
}
