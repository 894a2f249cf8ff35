package dev.modelfs.nfs;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.Node;
import dev.modelfs.tree.StoreTree;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Turns {@link FileHandle}s into nodes of the current {@link StoreTree} snapshot and nodes into
 * handles.
 *
 * <p>Invariants: a handle resolves to the node with its path inode inside the model directory
 * with its model inode (or, for model 0, in the directories above the models) in the current
 * snapshot, or to nothing (STALE) when that model or path is gone; two nodes inside one model share
 * an inode only when they show the same bytes (one blob), so either is a correct answer. Indexes are
 * built per snapshot and per model directory on first use and dropped with them.
 */
final class HandleResolver {
    private final StoreTree tree;
    private volatile Index index;
    /** Per model directory: its nodes by inode (weak keys: a replaced model's index goes with it). */
    private final Cache<DirNode, ModelIndex> modelIndexes = Caffeine.newBuilder().weakKeys().maximumSize(1024)
            .executor(Runnable::run).build();

    /**
     * The directories above the models and the model directories of one snapshot, by inode, and the parent
     * inode of each directory among them (the root is its own parent).
     */
    private record Index(DirNode root, Map<Long, Node> top, Map<Long, DirNode> models, Map<Long, Long> parents) {}

    /** The nodes under one model directory by inode, and the parent inode of each directory under it. */
    private record ModelIndex(Map<Long, Node> nodes, Map<Long, Long> parents) {}

    HandleResolver(StoreTree tree) {
        this.tree = tree;
    }

    /** The node {@code h} names now, or null when it is gone (the caller answers NFS3ERR_STALE). */
    Node resolve(FileHandle h) {
        Index ix = index();
        if (h.model() == 0) {
            return ix.top().get(h.path());
        }
        DirNode model = ix.models().get(h.model());
        if (model == null) {
            return null;
        }
        if (h.path() == h.model()) {
            return model;
        }
        return modelIndex(model).nodes().get(h.path());
    }

    /**
     * The handle of the directory that holds directory {@code dir} ({@code ..}); the root's is the root's. Null
     * when {@code dir} is gone.
     */
    FileHandle parent(FileHandle dir) {
        Index ix = index();
        if (dir.model() == 0) {
            Long p = ix.parents().get(dir.path());
            return p == null ? null : new FileHandle(0, p);
        }
        if (dir.path() == dir.model()) {
            Long p = ix.parents().get(dir.model());
            return p == null ? null : new FileHandle(0, p);
        }
        DirNode model = ix.models().get(dir.model());
        Long p = model == null ? null : modelIndex(model).parents().get(dir.path());
        return p == null ? null : new FileHandle(dir.model(), p);
    }

    /** The path of the model directory {@code h} lies in (for error labels), or null above the models or when gone. */
    String modelPath(FileHandle h) {
        return h.model() == 0 ? null : tree.modelWithInode(h.model());
    }

    /** The handle of {@code child}, found in the directory {@code parent} names. */
    FileHandle child(FileHandle parent, Node child) {
        if (parent.model() != 0) {
            return new FileHandle(parent.model(), child.inode());
        }
        if (child instanceof DirNode d && index().models().get(d.inode()) == d) {
            return new FileHandle(d.inode(), d.inode());
        }
        return new FileHandle(0, child.inode());
    }

    /**
     * The index of {@code model}, listed outside the cache's own map: listing builds the model directory, which may
     * wait on the store's disk, and a compute in the map would hold other models' entries meanwhile (docs/DESIGN.md
     * §2.8). Two calls that index one model at once both list it (the listing is computed once: {@link DirNode}).
     */
    private ModelIndex modelIndex(DirNode model) {
        ModelIndex mi = modelIndexes.getIfPresent(model);
        if (mi == null) {
            mi = indexModel(model);
            modelIndexes.put(model, mi);
        }
        return mi;
    }

    private Index index() {
        Index ix = index;
        StoreTree.Snapshot snap = tree.snapshot();
        DirNode root = snap.root();
        if (ix != null && ix.root() == root) {
            return ix;
        }
        Map<Long, Node> top = new HashMap<>();
        Map<Long, DirNode> models = new HashMap<>();
        Map<Long, Long> parents = new HashMap<>();
        top.put(root.inode(), root);
        parents.put(root.inode(), root.inode());
        walkTop(root, snap.modelDirs(), top, models, parents);
        ix = new Index(root, Map.copyOf(top), Map.copyOf(models), Map.copyOf(parents));
        index = ix;
        return ix;
    }

    private static void walkTop(DirNode dir, Set<DirNode> modelDirs, Map<Long, Node> top, Map<Long, DirNode> models,
                                Map<Long, Long> parents) {
        for (Node n : dir.children().values()) {
            if (n instanceof DirNode d) {
                parents.put(d.inode(), dir.inode());
            }
            if (n instanceof DirNode d && modelDirs.contains(d)) {
                models.put(d.inode(), d);
            } else {
                top.put(n.inode(), n);
                if (n instanceof DirNode d) {
                    walkTop(d, modelDirs, top, models, parents);
                }
            }
        }
    }

    /** Every node under a model directory by inode (lists the directory, which may fail for a broken model). */
    private static ModelIndex indexModel(DirNode model) {
        Map<Long, Node> nodes = new HashMap<>();
        Map<Long, Long> parents = new HashMap<>();
        indexInto(model, nodes, parents);
        return new ModelIndex(nodes, parents);
    }

    private static void indexInto(DirNode dir, Map<Long, Node> nodes, Map<Long, Long> parents) {
        for (Node n : dir.children().values()) {
            nodes.putIfAbsent(n.inode(), n);
            if (n instanceof DirNode d) {
                parents.putIfAbsent(d.inode(), dir.inode());
                indexInto(d, nodes, parents);
            }
        }
    }
}
