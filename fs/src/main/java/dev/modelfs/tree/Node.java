package dev.modelfs.tree;

/**
 * An entry of the mounted tree: a directory or a regular file.
 *
 * <p>Invariants: nodes are immutable once published (a directory's lazily computed listing is
 * computed once); {@link #inode()} is a pure function of the store content behind the node
 * (manifest digest and path, or blob digest for a file that is one whole blob).
 */
public sealed interface Node permits DirNode, FileNode {
    long inode();

    /** Modification time in nanoseconds since the epoch (the manifest's mtime inside models). */
    long mtimeNanos();
}
