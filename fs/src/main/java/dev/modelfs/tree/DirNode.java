package dev.modelfs.tree;

import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * A read-only directory whose listing may be computed lazily (model directories parse headers on
 * first access only).
 *
 * <p>Invariants: the listing is computed at most once (thread-safe) and never changes afterwards;
 * names are single path components (no {@code /}, not {@code .} or {@code ..}).
 */
public final class DirNode implements Node {
    private final long inode;
    private final long mtimeNanos;
    private final Supplier<SortedMap<String, Node>> loader;
    private volatile SortedMap<String, Node> children;

    public DirNode(long inode, long mtimeNanos, Supplier<SortedMap<String, Node>> loader) {
        this.inode = inode;
        this.mtimeNanos = mtimeNanos;
        this.loader = loader;
    }

    public static DirNode of(long inode, long mtimeNanos, SortedMap<String, Node> children) {
        DirNode d = new DirNode(inode, mtimeNanos, null);
        d.children = Collections.unmodifiableSortedMap(new TreeMap<>(children));
        return d;
    }

    @Override
    public long inode() {
        return inode;
    }

    @Override
    public long mtimeNanos() {
        return mtimeNanos;
    }

    /** The listing, computing it on first call. */
    public SortedMap<String, Node> children() {
        SortedMap<String, Node> c = children;
        if (c == null) {
            synchronized (this) {
                c = children;
                if (c == null) {
                    c = Collections.unmodifiableSortedMap(new TreeMap<>(loader.get()));
                    children = c;
                }
            }
        }
        return c;
    }

    public Node child(String name) {
        return children().get(name);
    }
}
