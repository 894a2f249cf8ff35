package dev.modelfs.serve;

import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.read.Errno;
import dev.modelfs.read.OpenedSource;
import dev.modelfs.read.ReadAhead;
import dev.modelfs.read.ReadFailure;
import dev.modelfs.telemetry.FileKind;
import dev.modelfs.telemetry.Telemetry;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.Node;
import java.io.IOException;
import java.nio.file.Path;

/**
 * What the FUSE mount and the NFS server decide alike (docs/SEMANTICS.md): the attributes of a node,
 * which error a failure is and that it is logged once, the space the tree reports, and how a file is
 * opened for reading (with read-ahead for converted bytes). The front ends only encode these answers
 * in their protocol.
 *
 * <p>Invariants: files are at most {@code 0444} (their {@link FileNode#mode()}: never more readable than
 * their sources) with one link, directories {@code 0555} with two and size
 * 4096; every node's blocks are {@code ceil(size / 512)}; times are the node's mtime; each distinct
 * failure line is logged once while it is among the {@value #LOGGED_MAX} remembered (bounded memory);
 * every file opened through {@link #open} shares one {@link ReadAhead}; every failure is reported to the
 * {@link Telemetry} (which front ends also report their reads and calls to, {@link #telemetry()}).
 */
public final class ServePolicy {
    /** Distinct failure lines remembered (so each is logged once). */
    public static final int LOGGED_MAX = FailureLog.REMEMBERED;
    /** The preferred I/O size reported for every file (the kernel's largest FUSE read). */
    public static final int BLOCK_SIZE = 128 * 1024;
    /** The longest name a component of the tree may have. */
    public static final int NAME_MAX = 255;
    /** The size a directory reports. */
    public static final long DIRECTORY_SIZE = 4096;

    private final StoreSpace space;
    private final BlobResolver resolver;
    private final ChunkCache chunks;
    private final ReadAhead readAhead;
    private final long uid;
    private final long gid;
    private final Telemetry telemetry;
    /** Complete converted files of the cache directory (null without {@code --cache-dir}). */
    private final CompleteFileServing complete;
    /** Opens of converted files wait here while a warm-up runs behind the served tree ({@link ConversionGate}). */
    private final ConversionGate conversions;
    private final FailureLog failures;

    /** The attributes every front end shows for one node. */
    public record Attributes(long inode, boolean directory, int permissions, int links, long size, long blocks,
                             long uid, long gid, long mtimeNanos) {
        /** Whole seconds of the mtime (floor, so times before 1970 stay ordered). */
        public long mtimeSeconds() {
            return Math.floorDiv(mtimeNanos, 1_000_000_000L);
        }

        /** Nanoseconds within {@link #mtimeSeconds()}. */
        public int mtimeNanosOfSecond() {
            return (int) Math.floorMod(mtimeNanos, 1_000_000_000L);
        }
    }

    /** The space of the file system holding the store, in bytes; {@code blockSize} is at least 1. */
    public record Space(long blockSize, long totalBytes, long freeBytes, long availableBytes) {}

    /**
     * @param storeRoot the store whose file system's space the tree reports
     * @param readAhead converts ahead of sequential readers of every file {@link #open} opens
     */
    public ServePolicy(Path storeRoot, BlobResolver resolver, ChunkCache chunks, ReadAhead readAhead, long uid, long gid) {
        this(storeRoot, resolver, chunks, readAhead, uid, gid, Telemetry.NONE);
    }

    /** The same, reporting conversions and failures to {@code telemetry}. */
    public ServePolicy(Path storeRoot, BlobResolver resolver, ChunkCache chunks, ReadAhead readAhead, long uid, long gid,
                       Telemetry telemetry) {
        this(storeRoot, resolver, chunks, readAhead, uid, gid, telemetry, null);
    }

    /** The same, opening converted files from their complete files in the cache directory when {@code complete} is not null. */
    public ServePolicy(Path storeRoot, BlobResolver resolver, ChunkCache chunks, ReadAhead readAhead, long uid, long gid,
                       Telemetry telemetry, CompleteFileServing complete) {
        this(storeRoot, resolver, chunks, readAhead, uid, gid, telemetry, complete, new ConversionGate());
    }

    /** The same, opening converted files only once {@code conversions} lets them ({@link #open}). */
    public ServePolicy(Path storeRoot, BlobResolver resolver, ChunkCache chunks, ReadAhead readAhead, long uid, long gid,
                       Telemetry telemetry, CompleteFileServing complete, ConversionGate conversions) {
        this(storeRoot, resolver, chunks, readAhead, uid, gid, telemetry, complete, conversions, new FailureLog());
    }

    /** The same, logging failures into {@code failures}, which other policies of the same tree may share. */
    public ServePolicy(Path storeRoot, BlobResolver resolver, ChunkCache chunks, ReadAhead readAhead, long uid, long gid,
                       Telemetry telemetry, CompleteFileServing complete, ConversionGate conversions, FailureLog failures) {
        this.failures = failures;
        this.conversions = conversions;
        this.complete = complete;
        this.telemetry = telemetry;
        this.space = new StoreSpace(storeRoot);
        this.resolver = resolver;
        this.chunks = chunks;
        this.readAhead = readAhead;
        this.uid = uid;
        this.gid = gid;
    }

    public Attributes attributes(Node n) {
        if (n instanceof FileNode f) {
            return new Attributes(n.inode(), false, f.mode(), 1, f.size(), blocks(f.size()), uid, gid, n.mtimeNanos());
        }
        return new Attributes(n.inode(), true, 0555, 2, DIRECTORY_SIZE, blocks(DIRECTORY_SIZE), uid, gid, n.mtimeNanos());
    }

    private static long blocks(long size) {
        return (size + 511) / 512;
    }

    /**
     * The space of the store's file system now, or the last the disk reported when it does not answer within
     * {@link StoreSpace#BOUND} (a stalled store disk holds no {@code statfs}).
     */
    public Space space() throws IOException {
        return space.space();
    }

    /**
     * Opens {@code file} for reading: every blob leased, sequential readers of converted bytes read ahead. With a cache
     * directory, a converted file (or a reassembled GGUF, {@code FileIdentity}) whose complete file is there and intact
     * is opened as that one file (served as a blob: kernel passthrough on FUSE), and one opened otherwise asks for its
     * complete file when closed ({@link CompleteFileServing}). A converted file opened from chunks is opened once the policy's
     * {@link ConversionGate} lets it: at once, or when a warm-up running behind the served tree is done (at most until
     * its deadline).
     */
    public OpenedSource open(FileNode file) throws IOException {
        ByteSource source = file.source();
        boolean converted = source.kind() == FileKind.CONVERTED;
        if (complete != null && (converted || source.kind() == FileKind.REASSEMBLED)) {
            OpenedSource whole = complete.open(source, chunks, telemetry);
            if (whole != null) {
                return whole;
            }
            if (converted) {
                conversions.await();
            }
            return OpenedSource.open(source, resolver, chunks, readAhead, telemetry, complete.assembleAfterClose(source));
        }
        if (converted) {
            conversions.await();
        }
        return OpenedSource.open(source, resolver, chunks, readAhead, telemetry);
    }

    /** Where the front ends report reads and calls (and this policy failures and conversions). */
    public Telemetry telemetry() {
        return telemetry;
    }

    /** The error {@code what} failed with ({@link ReadFailure#of} decides), logged once, reported against no model. */
    public Errno failed(String what, Throwable e) {
        return failed(what, null, e);
    }

    /**
     * The error {@code what} failed with ({@link ReadFailure#of} decides), logged once and reported against
     * {@code model} (the path of its model directory; null when it concerns none).
     */
    public Errno failed(String what, String model, Throwable e) {
        ReadFailure f = ReadFailure.of(e);
        logOnce(what + ": " + f.getMessage());
        telemetry.error(f.errno().name(), model == null ? Telemetry.NO_MODEL : model);
        return f.errno();
    }

    /** Logs {@code line} unless it was logged before (among the last {@value #LOGGED_MAX} distinct ones). */
    public void logOnce(String line) {
        failures.logOnce(line);
    }
}
