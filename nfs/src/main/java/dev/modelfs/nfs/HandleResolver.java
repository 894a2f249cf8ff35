package dev.modelfs.nfs;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.modelfs.view.DirNode;
import dev.modelfs.view.Node;
import dev.modelfs.view.StoreTree;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
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
    private final Cache<DirNode, Map<Long, Node>> modelIndexes = Caffeine.newBuilder().weakKeys().maximumSize(1024)
            .executor(Runnable::run).build();

    /** The directories above the models and the model directories of one snapshot, by inode. */
    private record Index(DirNode root, Map<Long, Node> top, Map<Long, DirNode> models) {}

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
        return modelIndexes.get(model, HandleResolver::indexModel).get(h.path());
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

    private Index index() {
        Index ix = index;
        DirNode root = tree.root();
        if (ix != null && ix.root() == root) {
            return ix;
        }
        Set<DirNode> modelDirs = Collections.newSetFromMap(new IdentityHashMap<>());
        while (true) {      // the model list and the root of the same snapshot
            DirNode before = tree.root();
            modelDirs.clear();
            tree.models().values().forEach(e -> modelDirs.add(e.dir()));
            root = tree.root();
            if (before == root) {
                break;
            }
        }
        Map<Long, Node> top = new HashMap<>();
        Map<Long, DirNode> models = new HashMap<>();
        top.put(root.inode(), root);
        walkTop(root, modelDirs, top, models);
        ix = new Index(root, Map.copyOf(top), Map.copyOf(models));
        index = ix;
        return ix;
    }

    private static void walkTop(DirNode dir, Set<DirNode> modelDirs, Map<Long, Node> top, Map<Long, DirNode> models) {
        for (Node n : dir.children().values()) {
            if (n instanceof DirNode d && modelDirs.contains(d)) {
                models.put(d.inode(), d);
            } else {
                top.put(n.inode(), n);
                if (n instanceof DirNode d) {
                    walkTop(d, modelDirs, top, models);
                }
            }
        }
    }

    /** Every node under a model directory by inode (lists the directory, which may fail for a broken model). */
    private static Map<Long, Node> indexModel(DirNode model) {
        Map<Long, Node> out = new HashMap<>();
        indexInto(model, out);
        return out;
    }

    private static void indexInto(DirNode dir, Map<Long, Node> out) {
        for (Node n : dir.children().values()) {
            out.putIfAbsent(n.inode(), n);
            if (n instanceof DirNode d) {
                indexInto(d, out);
            }
        }
    }
}
