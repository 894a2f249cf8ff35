package dev.modelfs.tree;

import dev.modelfs.bytes.ByteSource;
import java.util.Map;

/**
 * A regular, read-only file.
 *
 * <p>Invariants: {@code source.size()} is the exact {@code st_size}; {@code xattrs} (names without
 * the {@code user.} namespace prefix handling: full names like {@code user.modelfs.digest}) is
 * unmodifiable.
 */
public record FileNode(long inode, long mtimeNanos, ByteSource source, Map<String, String> xattrs) implements Node {
    public FileNode {
        xattrs = Map.copyOf(xattrs);
    }

    public long size() {
        return source.size();
    }
}
