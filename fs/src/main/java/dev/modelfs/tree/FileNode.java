package dev.modelfs.tree;

import dev.modelfs.bytes.ByteSource;
import java.util.Map;

/**
 * A regular, read-only file.
 *
 * <p>Invariants: {@code source.size()} is the exact {@code st_size}; {@code xattrs} (names without
 * the {@code user.} namespace prefix handling: full names like {@code user.modelfs.digest}) is
 * unmodifiable; {@code mode} (permission bits) is a subset of {@code 0444}: never more readable than the
 * files it is built from ({@link dev.modelfs.model.SourceModes}).
 */
public record FileNode(long inode, long mtimeNanos, ByteSource source, Map<String, String> xattrs, int mode) implements Node {
    public FileNode {
        xattrs = Map.copyOf(xattrs);
        mode &= 0444;
    }

    /** A file readable by everyone ({@code 0444}) until {@link TreeBuilder} narrows it to its sources. */
    public FileNode(long inode, long mtimeNanos, ByteSource source, Map<String, String> xattrs) {
        this(inode, mtimeNanos, source, xattrs, 0444);
    }

    /** This file with only the read bits {@code allowed} also grants. */
    public FileNode narrowedTo(int allowed) {
        return (mode & allowed) == mode ? this : new FileNode(inode, mtimeNanos, source, xattrs, mode & allowed);
    }

    public long size() {
        return source.size();
    }
}
