package dev.modelfs.tree;

import dev.modelfs.model.MemoryBudget;
import dev.modelfs.store.Layer;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.ManifestParser;
import dev.modelfs.store.ManifestRef;
import dev.modelfs.store.ModelConfig;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.logging.Logger;

/**
 * The whole mounted tree as an immutable snapshot of the store, refreshed on demand.
 *
 * <p>Invariants: {@link #root()} always returns a complete, consistent snapshot; {@link #refresh()}
 * replaces it atomically and only when the set of manifest files (path, mtime, size, file key)
 * changed; model directories of unchanged manifests are reused (keeping what they already parsed);
 * a manifest that cannot be read or parsed is left out with one log line per change of that manifest
 * file (it is not parsed again while it stays the same, whatever else changes); a folder above the
 * model directories has a later mtime after every refresh that changed its listing, and the same mtime
 * after one that did not (see {@link FolderTimes}).
 *
 * <p>No lock is held across store I/O (docs/DESIGN.md §2.8): a refresh lists and loads manifests under
 * {@code refreshing} alone, which only refreshes take, and publishes what it found in one volatile write of
 * {@link State}; {@link #root()}, {@link #models()}, {@link #modelCounts()}'s list and the path look-ups read
 * the last published state and never wait for a refresh, however long the store's disk takes to answer.
 */
public final class StoreTree {
    private static final Logger LOG = Logger.getLogger(StoreTree.class.getName());

    private final OllamaStore store;
    private final ModelDirectory models;
    /** The root's and the host/namespace folders' mtimes, moved forward when their listings change. */
    private final FolderTimes folderTimes = new FolderTimes();
    /** Taken by refreshes only (one at a time), never by a reader: a refresh may wait on the store's disk under it. */
    private final Object refreshing = new Object();
    /** What the last refresh published: the root and the models in one volatile write, so readers see them together. */
    private volatile State state = new State(new Snapshot(null, Set.of()), null, Map.of(), Set.of());

    /**
     * One refresh's outcome: the root it built, the manifest files it listed, the models loaded from them and the
     * manifest files (path, mtime, size, file key) that failed to load (not retried, nor logged, until they change).
     */
    private record State(Snapshot snapshot, List<ManifestRef> lastRefs, Map<ManifestRef, ModelEntry> entries, Set<ManifestRef> failed) {}

    /**
     * The root and the model directories of one snapshot, as one refresh published them: every model directory under
     * {@code root} is in {@code modelDirs} (a set by identity) and no other directory is. A reader that needs both (the NFS server's
     * handle index, which must never list a model directory as a folder above the models: listing it builds the
     * model, which may wait on the store's disk) takes them here, never from {@link #root()} and {@link #models()} in
     * turn, which a refresh between the two calls would mismatch.
     */
    public record Snapshot(DirNode root, Set<DirNode> modelDirs) {}
    /** The current snapshot's model directory paths, and those paths by the directory's inode (error labels). */
    private volatile Map<Long, String> modelPaths = Map.of();
    private volatile Set<String> modelPathSet = Set.of();

    /** A model directory, the manifest it was built from and its share of the memory budget. */
    public record ModelEntry(Manifest manifest, DirNode dir, ManifestRef ref, MemoryBudget.Account budget) {}

    /** The heap of all model directories together ({@link MemoryBudget}). */
    private final MemoryBudget budget = MemoryBudget.standard();

    /**
     * How many models the tree serves, and how many are broken: manifests left out because they cannot be
     * read or parsed, plus served models with a blob missing or of another size than the manifest says.
     */
    public record ModelCounts(int served, int broken) {}

    public StoreTree(OllamaStore store, ModelDirectory models) {
        this.store = store;
        this.models = models;
        refresh();
    }

    public DirNode root() {
        return state.snapshot().root();
    }

    /** The current root and its model directories, read together ({@link Snapshot}). */
    public Snapshot snapshot() {
        return state.snapshot();
    }

    public OllamaStore store() {
        return store;
    }

    /** Current models by directory path. */
    public SortedMap<String, ModelEntry> models() {
        SortedMap<String, ModelEntry> out = new TreeMap<>();
        state.entries().values().forEach(e -> out.put(e.manifest().name().directoryPath(), e));
        return out;
    }

    /** Rescans manifests; returns true if the tree changed. Readers go on with the last snapshot meanwhile. */
    public boolean refresh() {
        synchronized (refreshing) {
            return refresh(store.listManifests());
        }
    }

    private boolean refresh(List<ManifestRef> refs) {
        State was = state;
        Map<ManifestRef, ModelEntry> entries = was.entries();
        Set<ManifestRef> failed = was.failed();
        if (refs.equals(was.lastRefs())) {
            return false;
        }
        Map<ManifestRef, ModelEntry> next = new HashMap<>();
        Set<ManifestRef> nextFailed = new HashSet<>();
        for (ManifestRef ref : refs) {
            if (failed.contains(ref)) {
                nextFailed.add(ref);
                continue;
            }
            ModelEntry e = entries.get(ref);
            if (e == null) {
                e = load(ref);
            }
            if (e != null) {
                next.put(ref, e);
            } else {
                nextFailed.add(ref);
            }
        }
        TreeBuilder tb = new TreeBuilder("", folderTimes::mtimeOf);
        for (ManifestRef ref : refs) {
            ModelEntry e = next.get(ref);
            if (e != null) {
                tb.put(e.manifest().name().directoryPath(), e.dir());
            }
        }
        SortedMap<String, Node> top = tb.build();
        DirNode root = DirNode.of(Inodes.ROOT, folderTimes.mtimeOf("", top), top);
        folderTimes.commit();
        for (Map.Entry<ManifestRef, ModelEntry> old : entries.entrySet()) {
            if (next.get(old.getKey()) != old.getValue()) {
                old.getValue().budget().release();       // the model left the tree: its share is free again
            }
        }
        Map<Long, String> paths = new HashMap<>();
        next.values().forEach(e -> paths.put(e.dir().inode(), e.manifest().name().directoryPath()));
        modelPaths = Map.copyOf(paths);
        modelPathSet = Set.copyOf(paths.values());
        Set<DirNode> dirs = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        next.values().forEach(e -> dirs.add(e.dir()));
        state = new State(new Snapshot(root, java.util.Collections.unmodifiableSet(dirs)), refs, Map.copyOf(next), Set.copyOf(nextFailed));
        return true;
    }

    /** The path of the model directory that tree path {@code path} lies in (a leading {@code /} is allowed), or null. */
    public String modelOf(String path) {
        Set<String> models = modelPathSet;
        String p = path.startsWith("/") ? path.substring(1) : path;
        for (int i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) {
            if (models.contains(p.substring(0, i))) {
                return p.substring(0, i);
            }
        }
        return models.contains(p) ? p : null;
    }

    /** The path of the model directory with inode {@code inode} in the current snapshot, or null. */
    public String modelWithInode(long inode) {
        return modelPaths.get(inode);
    }

    /** The served and broken models now (stats every blob of every served model: for scrapes, not reads). */
    public ModelCounts modelCounts() {
        State s = state;
        List<Manifest> served = new ArrayList<>(s.entries().size());
        s.entries().values().forEach(e -> served.add(e.manifest()));
        int unloadable = s.failed().size();
        int missing = 0;
        for (Manifest m : served) {
            missing += blobsIntact(m) ? 0 : 1;
        }
        return new ModelCounts(served.size(), unloadable + missing);
    }

    /** Whether every blob {@code m} names exists with the size the manifest gives. */
    private boolean blobsIntact(Manifest m) {
        List<Layer> all = new ArrayList<>(m.layers());
        if (m.config() != null) {
            all.add(m.config());
        }
        for (Layer l : all) {
            Optional<Path> p = l.digest().flatMap(store::blobPath);
            try {
                if (l.digest().isPresent() && (p.isEmpty() || Files.size(p.get()) != l.size())) {
                    return false;
                }
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }

    private ModelEntry load(ManifestRef ref) {
        try {
            byte[] raw = store.readManifest(ref);
            Manifest m = ManifestParser.parse(ref.name(), raw);
            ModelConfig config = ModelConfig.EMPTY;
            try {
                config = ModelConfig.read(store, m);
            } catch (IOException e) {
                LOG.warning(ref.name() + ": config blob unreadable: " + e.getMessage());
            }
            ModelContext ctx = new ModelContext(store, m, config, ref.mtimeNanos());
            MemoryBudget.Account share = budget.account();
            DirNode dir = new DirNode(Inodes.of("model:" + m.digest().hex() + ":" + ref.name().manifestPath()),
                    ref.mtimeNanos(), () -> models.build(ctx, share));
            return new ModelEntry(m, dir, ref, share);
        } catch (IOException | RuntimeException e) {
            LOG.warning("model " + ref.name().displayShortest() + " disabled: " + e.getMessage());
            return null;
        }
    }
}
