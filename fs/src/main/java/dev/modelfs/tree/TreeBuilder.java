package dev.modelfs.tree;

import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.bytes.Segment;
import dev.modelfs.format.HeapCharge;
import dev.modelfs.model.MemoryBudget;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.logging.Logger;

/**
 * Assembles a mutable tree of directories from {@code path -> node} entries, creating intermediate
 * directories, then freezes it into {@link DirNode}s.
 *
 * <p>Invariants: a path is placed at most once; a path that collides with an existing file or
 * directory (or whose parent is a file) is rejected with one log line and the first entry wins.
 */
public final class TreeBuilder {
    private static final Logger LOG = Logger.getLogger(TreeBuilder.class.getName());

    private final Dir root = new Dir("");
    private final String inodeScope;
    private final FolderMtime mtimes;

    /** The mtime of an intermediate directory, given its relative path and its frozen listing. */
    @FunctionalInterface
    public interface FolderMtime {
        long of(String path, SortedMap<String, Node> children);
    }

    /**
     * @param inodeScope prefix for intermediate directories' inode derivation (e.g. the manifest digest)
     * @param mtimeNanos mtime of intermediate directories
     */
    /** The read bits every file placed gets at most. */
    private int fileMode = 0444;
    /** Where each file and folder placed is charged ({@link #chargeTo}). */
    private HeapCharge charge = HeapCharge.NONE;
    /** Literal byte arrays charged so far: an array shared by several files is charged once. */
    private final Set<byte[]> chargedLiterals = Collections.newSetFromMap(new IdentityHashMap<>());

    public TreeBuilder(String inodeScope, long mtimeNanos) {
        this(inodeScope, (path, children) -> mtimeNanos);
    }

    /**
     * @param inodeScope prefix for intermediate directories' inode derivation
     * @param mtimes the mtime of each intermediate directory, asked once per directory after its
     *     subdirectories (children first)
     */
    public TreeBuilder(String inodeScope, FolderMtime mtimes) {
        this.inodeScope = inodeScope;
        this.mtimes = mtimes;
    }

    private static final class Dir {
        final String path;
        final SortedMap<String, Object> entries = new TreeMap<>();   // Dir or Node

        Dir(String path) {
            this.path = path;
        }
    }

    /** Splits a relative path into safe components, or returns null if it is not a safe relative path. */
    public static List<String> safeComponents(String path) {
        if (path == null || path.isEmpty() || path.startsWith("/") || path.length() > 4096 || path.indexOf('\0') >= 0) {
            return null;
        }
        List<String> out = new ArrayList<>();
        for (String c : path.split("/", -1)) {
            if (c.isEmpty() || c.equals(".") || c.equals("..") || c.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 255) {
                return null;
            }
            out.add(c);
        }
        return out.size() > 64 ? null : out;
    }

    /** Places {@code node} at relative {@code path}; returns false (and logs) if the path is unsafe or taken. */
    public boolean put(String path, Node node) {
        List<String> parts = safeComponents(path);
        if (parts == null) {
            LOG.warning(inodeScopeLabel() + "skipping unsafe path " + printable(path));
            return false;
        }
        Dir d = root;
        for (int i = 0; i < parts.size() - 1; i++) {
            Object e = d.entries.get(parts.get(i));
            if (e == null) {
                charge.charge(MemoryBudget.ENTRY_BYTES + 2L * parts.get(i).length());
                Dir nd = new Dir(d.path.isEmpty() ? parts.get(i) : d.path + "/" + parts.get(i));
                d.entries.put(parts.get(i), nd);
                d = nd;
            } else if (e instanceof Dir ed) {
                d = ed;
            } else {
                LOG.warning(inodeScopeLabel() + "skipping " + printable(path) + ": a file is in the way");
                return false;
            }
        }
        String last = parts.getLast();
        if (d.entries.containsKey(last)) {
            LOG.warning(inodeScopeLabel() + "skipping " + printable(path) + ": name already taken");
            return false;
        }
        charge.charge(cost(last, node));
        d.entries.put(last, node instanceof FileNode f ? f.narrowedTo(fileMode) : node);
        return true;
    }

    /**
     * Replaces the file at relative {@code path} by {@code node} and returns the file it replaces; null (and
     * nothing placed) when no file is there. The new file is charged like one {@link #put}.
     */
    public FileNode replace(String path, FileNode node) {
        List<String> parts = safeComponents(path);
        if (parts == null) {
            return null;
        }
        Dir d = root;
        for (int i = 0; i < parts.size() - 1; i++) {
            if (!(d.entries.get(parts.get(i)) instanceof Dir sub)) {
                return null;
            }
            d = sub;
        }
        if (!(d.entries.get(parts.getLast()) instanceof FileNode old)) {
            return null;
        }
        charge.charge(cost(parts.getLast(), node));
        d.entries.put(parts.getLast(), node.narrowedTo(fileMode));
        return old;
    }

    /**
     * Charges every file and folder placed from now on to {@code c} ({@link MemoryBudget#ENTRY_BYTES} and its
     * name, plus the literal bytes and {@link ConvertedData#builtBytes()} of a file), before it is placed;
     * a charge refused throws out of {@link #put} and nothing more is placed.
     */
    public void chargeTo(HeapCharge c) {
        this.charge = c;
    }

    private long cost(String name, Node node) {
        long bytes = MemoryBudget.ENTRY_BYTES + 2L * name.length();
        if (node instanceof FileNode f) {
            ByteSource src = f.source();
            for (int i = 0; i < src.segmentCount(); i++) {
                switch (src.segment(i)) {
                    case Segment.Literal l -> bytes += chargedLiterals.add(l.bytes()) ? l.bytes().length : 0;
                    case Segment.Converted c -> bytes += c.data().builtBytes();
                    case Segment.BlobSlice b -> { }
                    case Segment.Zeros z -> { }
                }
            }
        }
        return bytes;
    }

    /** Files placed from now on get at most these read bits ({@link dev.modelfs.model.SourceModes}). */
    public void narrowFilesTo(int mode) {
        this.fileMode = mode;
    }

    private String inodeScopeLabel() {
        return inodeScope.isEmpty() ? "" : "[" + inodeScope.substring(0, Math.min(12, inodeScope.length())) + "] ";
    }

    private static String printable(String s) {
        return dev.modelfs.format.Quoting.quote(s);
    }

    /** Every file placed so far, by relative path, in path order (directories are implied by the paths). */
    public SortedMap<String, FileNode> files() {
        SortedMap<String, FileNode> out = new TreeMap<>();
        collectFiles(root, out);
        return out;
    }

    /** Whether a directory exists at relative {@code path} (a single component or a path). */
    public boolean hasDirectory(String path) {
        Dir d = root;
        for (String part : path.split("/")) {
            if (!(d.entries.get(part) instanceof Dir sub)) {
                return false;
            }
            d = sub;
        }
        return true;
    }

    private static void collectFiles(Dir d, SortedMap<String, FileNode> out) {
        for (var e : d.entries.entrySet()) {
            if (e.getValue() instanceof Dir sub) {
                collectFiles(sub, out);
            } else if (e.getValue() instanceof FileNode f) {
                out.put(d.path.isEmpty() ? e.getKey() : d.path + "/" + e.getKey(), f);
            }
        }
    }

    /** The frozen listing of the root. */
    public SortedMap<String, Node> build() {
        return freeze(root);
    }

    private SortedMap<String, Node> freeze(Dir d) {
        SortedMap<String, Node> out = new TreeMap<>();
        for (var e : d.entries.entrySet()) {
            if (e.getValue() instanceof Dir sub) {
                SortedMap<String, Node> children = freeze(sub);
                out.put(e.getKey(), DirNode.of(Inodes.of(inodeScope + ":dir:" + sub.path), mtimes.of(sub.path, children), children));
            } else {
                out.put(e.getKey(), (Node) e.getValue());
            }
        }
        return out;
    }
}
