package dev.modelfs.fuse;

import dev.modelfs.read.Errno;
import dev.modelfs.read.OpenedSource;
import dev.modelfs.serve.ServePolicy;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.Node;
import dev.modelfs.tree.StoreTree;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import jnr.ffi.Pointer;
import jnr.ffi.types.off_t;
import jnr.ffi.types.size_t;
import ru.serce.jnrfuse.AbstractFuseFS;
import ru.serce.jnrfuse.ErrorCodes;
import ru.serce.jnrfuse.FuseFillDir;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.FuseFileInfo;
import ru.serce.jnrfuse.struct.Statvfs;

/**
 * The jnr-fuse callbacks: each resolves its path in the current {@link StoreTree} snapshot ({@link TreePaths}) and
 * answers with the {@link ServePolicy}: attributes and space encoded by {@link StatReplies}, extended attributes by
 * {@link XattrReplies}, open files kept by {@link OpenHandles}; every callback behind one guard, every failure through
 * one {@code fail}. Knows nothing about file formats. Reads never come here: they are one of the three READ paths
 * ({@link ReadBufUpcall}, {@link SmallReads}, {@link RingEntries}), which find the open file with {@link #openSource}.
 *
 * <p>Invariants: every mutating operation returns EROFS ({@link ReadOnlyFuseOperations}); an open file
 * keeps serving the bytes of the snapshot it was opened in (it holds its {@link OpenedSource}); a
 * missing blob is ENOENT at open, a size mismatch or a blob truncated under its mapping EIO; each
 * distinct failure is logged once and reported with the model its path lies in ({@link ServePolicy#failed}); the
 * root carries the attribute {@value #METRICS_XATTR} when the policy's telemetry has an endpoint. An open of a file
 * that is one whole blob may be handed to the kernel's passthrough ({@link PassthroughOpens}, which may also refuse
 * it with EBUSY); its reads then never come here.
 */
public final class ModelFs extends AbstractFuseFS implements ReadOnlyFuseOperations {
    private static final int O_ACCMODE = 3;
    private static final int O_TRUNC = 01000;
    /** {@code O_DIRECT}: 040000 on x86-64, 0200000 on aarch64 (the two platforms {@link FuseStructs} supports). */
    private static final int O_DIRECT = "aarch64".equals(System.getProperty("os.arch")) ? 0200000 : 040000;
    /** The root's attribute naming the metrics endpoint ({@code modelfs status} reads it). */
    public static final String METRICS_XATTR = "user.modelfs.metrics";

    private final StoreTree tree;
    private final ServePolicy policy;
    private final XattrReplies xattrs;
    private final PassthroughOpens passthrough;
    private final OpenHandles open;

    /** Set once the mount is stopping: new opens fail, open files keep being served. */
    private volatile boolean stopping;

    /** From now on every {@code open} fails with ESHUTDOWN; files already open keep being served. */
    public void stopOpening() {
        stopping = true;
    }

    /** A file system over {@code tree} that answers as {@code policy} says. */
    public ModelFs(StoreTree tree, ServePolicy policy) {
        this.tree = tree;
        this.policy = policy;
        this.xattrs = new XattrReplies(policy.telemetry().endpoint().map(e -> Map.of(METRICS_XATTR, e)).orElse(Map.of()));
        this.passthrough = new PassthroughOpens(policy.telemetry());
        this.open = new OpenHandles(passthrough);
    }

    /** Which opens of this mount the kernel's passthrough takes (none until INIT accepted passthrough). */
    PassthroughOpens passthrough() {
        return passthrough;
    }

    /** The passthrough registration of open file {@code fh}, or 0 (for {@link PassthroughChannels}' OPEN reply). */
    int backingOf(long fh) {
        OpenHandles.Handle h = open.get(fh);
        return h == null ? 0 : h.backing();
    }

    /** Node at an absolute FUSE path in the current snapshot, or null ({@link TreePaths}). */
    Node resolve(String path) {
        return TreePaths.resolve(tree, path);
    }

    private int getattr0(String path, FileStat stat) {
        Node n;
        try {
            n = resolve(path);
        } catch (RuntimeException e) {
            return fail("getattr", path, e);
        }
        if (n == null) {
            return -ErrorCodes.ENOENT();
        }
        fill(n, stat);
        return 0;
    }

    private void fill(Node n, FileStat stat) {
        StatReplies.fill(policy.attributes(n), stat);
    }

    private int readdir0(String path, Pointer buf, FuseFillDir filler, long offset, FuseFileInfo fi) {
        Node n;
        try {
            n = resolve(path);
        } catch (RuntimeException e) {
            return fail("readdir", path, e);
        }
        if (n == null) {
            return -ErrorCodes.ENOENT();
        }
        if (!(n instanceof DirNode d)) {
            return -ErrorCodes.ENOTDIR();
        }
        filler.apply(buf, ".", null, 0);
        filler.apply(buf, "..", null, 0);
        for (var e : d.children().entrySet()) {
            FileStat st = new FileStat(jnr.ffi.Runtime.getSystemRuntime());
            fill(e.getValue(), st);
            if (filler.apply(buf, e.getKey(), st, 0) != 0) {
                break;
            }
        }
        return 0;
    }

    private int open0(String path, FuseFileInfo fi) {
        if (stopping) {
            return -ErrorCodes.ESHUTDOWN();
        }
        int flags = fi.flags.get();
        if ((flags & O_ACCMODE) != 0 || (flags & O_TRUNC) != 0) {
            return -ErrorCodes.EROFS();
        }
        Node n = resolve(path);
        if (n == null) {
            return -ErrorCodes.ENOENT();
        }
        if (!(n instanceof FileNode f)) {
            return -ErrorCodes.EISDIR();
        }
        try {
            long fh = open.open(policy, path, f, (flags & O_DIRECT) != 0);
            if (fh == OpenHandles.BUSY) {
                return -ErrorCodes.EBUSY();
            }
            fi.fh.set(fh);
            return 0;
        } catch (IOException | RuntimeException e) {
            return fail("open", path, e);
        }
    }

    /** The open file behind handle {@code fh}, or null (for {@link FuseWorkers}' {@code read_buf}). */
    OpenedSource openSource(long fh) {
        OpenHandles.Handle h = open.get(fh);
        return h == null ? null : h.source();
    }

    /** Logs a failed read of C path {@code pathC} (may be null) once; returns its negated errno. */
    int readFailed(MemorySegment pathC, Throwable e) {
        String path = pathC == null || pathC.equals(MemorySegment.NULL) ? "?" : pathC.reinterpret(4096).getString(0);
        return fail("read", path, e);
    }

    /** Logs a failed read of open file {@code fh} once ({@link SmallReads}); returns its negated errno. */
    int readFailed(long fh, Throwable e) {
        OpenHandles.Handle h = open.get(fh);
        return fail("read", h == null ? "?" : h.path(), e);
    }

    /** Reports a read of {@code src} that answered {@code bytes} bytes and began at {@code startNanos}. */
    void readDone(OpenedSource src, long bytes, long startNanos) {
        policy.telemetry().read(src.kind(), bytes, System.nanoTime() - startNanos);
    }

    /** Reports a request answered through io_uring ({@link FuseRing}). */
    void ringRequest() {
        policy.telemetry().fuseRingRequest();
    }

    /** Files open now. */
    public int openFiles() {
        return open.size();
    }

    /**
     * A native copy of jnr-fuse's {@code struct fuse_operations} (jnr keeps the table in heap memory and
     * copies it per call; its closures stay alive as long as this object), for {@link FuseWorkers}.
     */
    MemorySegment copyOperations(java.lang.foreign.Arena arena) {
        int size = jnr.ffi.Struct.size(fuseOperations);
        if (size != FuseStructs.OPERATIONS.byteSize()) {
            throw new IllegalStateException("jnr-fuse's struct fuse_operations has " + size + " bytes, libfuse 2.9's "
                    + FuseStructs.OPERATIONS.byteSize());
        }
        byte[] table = new byte[size];
        jnr.ffi.Struct.getMemory(fuseOperations).get(0, table, 0, size);
        MemorySegment copy = arena.allocate(FuseStructs.OPERATIONS);
        MemorySegment.copy(MemorySegment.ofArray(table), 0, copy, 0, size);
        return copy;
    }

    private int release0(String path, FuseFileInfo fi) {
        open.release(fi.fh.get());
        return 0;
    }

    /**
     * Attributes of an open file are those of what it opened, not of what its path shows now: after
     * a re-pull, a reader that opened the old model still sees (and can read up to) the old size.
     */
    private int fgetattr0(String path, FileStat stat, FuseFileInfo fi) {
        OpenHandles.Handle h = fi == null ? null : open.get(fi.fh.get());
        if (h == null) {
            return getattr(path, stat);
        }
        fill(h.node(), stat);
        return 0;
    }

    private int statfs0(String path, Statvfs st) {
        try {
            StatReplies.fill(policy.space(), st);
            return 0;
        } catch (IOException | RuntimeException e) {
            return fail("statfs", path, e);
        }
    }

    @Override
    public int getxattr(String path, String name, Pointer value, @size_t long size) {
        return guarded("getxattr", path, () -> getxattr0(path, name, value, size));
    }

    private int getxattr0(String path, String name, Pointer value, long size) {
        Node n = resolve(path);
        return n == null ? -ErrorCodes.ENOENT() : xattrs.get(path, n, name, value, size);
    }

    @Override
    public int listxattr(String path, Pointer list, @size_t long size) {
        return guarded("listxattr", path, () -> listxattr0(path, list, size));
    }

    private int listxattr0(String path, Pointer list, long size) {
        Node n = resolve(path);
        return n == null ? -ErrorCodes.ENOENT() : xattrs.list(path, n, list, size);
    }

    private int access0(String path, int mask) {
        try {
            if (resolve(path) == null) {
                return -ErrorCodes.ENOENT();
            }
        } catch (RuntimeException e) {
            return fail("access", path, e);
        }
        return (mask & 2) != 0 ? -ErrorCodes.EROFS() : 0;
    }

    // ---- every callback answers: a Throwable in one (a bug, an exhausted stack, OutOfMemoryError) is EIO ----

    @Override
    public int getattr(String path, FileStat stat) {
        return guarded("getattr", path, () -> getattr0(path, stat));
    }

    @Override
    public int readdir(String path, Pointer buf, FuseFillDir filler, @off_t long offset, FuseFileInfo fi) {
        return guarded("readdir", path, () -> readdir0(path, buf, filler, offset, fi));
    }

    @Override
    public int open(String path, FuseFileInfo fi) {
        return guarded("open", path, () -> open0(path, fi));
    }

    @Override
    public int release(String path, FuseFileInfo fi) {
        return guarded("release", path, () -> release0(path, fi));
    }

    @Override
    public int fgetattr(String path, FileStat stat, FuseFileInfo fi) {
        return guarded("fgetattr", path, () -> fgetattr0(path, stat, fi));
    }

    @Override
    public int statfs(String path, Statvfs st) {
        return guarded("statfs", path, () -> statfs0(path, st));
    }

    @Override
    public int access(String path, int mask) {
        return guarded("access", path, () -> access0(path, mask));
    }

    /** A callback's body: its reply (0, a count, or a negated errno). */
    @FunctionalInterface
    private interface Callback {
        int run() throws Exception;
    }

    /**
     * The one guard of every callback: whatever {@code body} throws, the request is answered (EIO) and the
     * worker thread carries on; a request left unanswered would hang its caller in the kernel for good.
     */
    private int guarded(String op, String path, Callback body) {
        try {
            return body.run();
        } catch (Throwable t) {
            return internalError(op, path, t);
        }
    }

    private int internalError(String op, String path, Throwable t) {
        try {
            return fail(op, path, t);
        } catch (Throwable again) {              // even logging failed (out of memory): still answer
            return -ErrorCodes.EIO();
        }
    }

    @Override
    protected String getFSName() {
        return "modelfs";
    }

    /**
     * Logs a failed operation {@code op} on {@code path} once, reports it against the model the path lies in,
     * and returns its negated errno (the policy decides which).
     */
    private int fail(String op, String path, Throwable e) {
        return -errno(policy.failed(op + " " + path, path == null ? null : tree.modelOf(path), e));
    }

    private static int errno(Errno e) {
        return switch (e) {
            case ENOENT -> ErrorCodes.ENOENT();
            case EACCES -> ErrorCodes.EACCES();
            case EIO -> ErrorCodes.EIO();
        };
    }
}
