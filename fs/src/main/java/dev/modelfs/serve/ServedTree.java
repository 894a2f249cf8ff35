package dev.modelfs.serve;

import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.cache.BlobMappings;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.cache.DiskChunkStore;
import dev.modelfs.read.ReadAhead;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.telemetry.Telemetry;
import dev.modelfs.tree.ModelDirectory;
import dev.modelfs.tree.ModelView;
import dev.modelfs.tree.StoreTree;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * What every front end (the FUSE mount, the NFS server) serves: the {@link StoreTree} over a store,
 * its background refresher, the shared blob mappings, the one {@link BlobResolver}, the chunk
 * cache of converted bytes and the read-ahead pool that fills it, and the {@link ServePolicy} both
 * front ends answer with, and the {@link Telemetry} both report to. Built in one place so both front ends show the same tree with the same
 * bytes, attributes and errors.
 *
 * <p>Invariants: the refresher rescans the store every {@code refreshMillis} until {@link #close()};
 * the chunk cache holds at most {@code cacheBytes} of native memory; {@link #close()} is idempotent and
 * stops the read-ahead pool, then releases the mappings and the cache (call it only once no reader uses
 * them any more).
 */
public final class ServedTree implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ServedTree.class.getName());

    private final StoreTree tree;
    private final BlobMappings mappings;
    private final BlobResolver resolver;
    private final ChunkCache chunks;
    private final ReadAhead readAhead;
    private final ScheduledExecutorService refresher;
    private final Telemetry telemetry;
    /** Complete converted files of the cache directory (null without one). */
    private final CompleteFileServing complete;
    /** Holds the opening of converted files while a front end warms up behind this tree ({@link #conversions()}). */
    private final ConversionGate conversions = new ConversionGate();
    /** The failure lines logged by every policy of this tree (each once). */
    private final FailureLog failures = new FailureLog();
    private boolean closed;
    /** Converting ahead of readers ({@link #convertAhead}), or null. */
    private ConvertAhead ahead;
    /** How long {@link #close} waits for converting ahead to end (it checks between steps of 1 MiB). */
    static final java.time.Duration AHEAD_STOP = java.time.Duration.ofSeconds(30);

    private ServedTree(StoreTree tree, BlobMappings mappings, BlobResolver resolver, ChunkCache chunks,
                       ReadAhead readAhead, ScheduledExecutorService refresher, Telemetry telemetry) {
        this.telemetry = telemetry;
        this.complete = chunks.disk() == null ? null : new CompleteFileServing(chunks.disk(), resolver, chunks);
        this.tree = tree;
        this.mappings = mappings;
        this.resolver = resolver;
        this.chunks = chunks;
        this.readAhead = readAhead;
        this.refresher = refresher;
    }

    /** Builds the tree over {@code store} with {@code views} and starts refreshing it; reports nothing. */
    public static ServedTree open(OllamaStore store, List<ModelView> views, long cacheBytes, long refreshMillis) {
        return open(store, views, cacheBytes, refreshMillis, Telemetry.NONE, null);
    }

    /** Builds the tree over {@code store} with {@code views} and starts refreshing it; reads report to {@code telemetry}. */
    public static ServedTree open(OllamaStore store, List<ModelView> views, long cacheBytes, long refreshMillis,
                                  Telemetry telemetry) {
        return open(store, views, cacheBytes, refreshMillis, telemetry, null);
    }

    /**
     * Builds the tree over {@code store} with {@code views}, converted chunks cached in memory and, when
     * {@code disk} is not null, on disk (the served tree then owns and closes it), and starts refreshing it;
     * reads report to {@code telemetry}.
     */
    public static ServedTree open(OllamaStore store, List<ModelView> views, long cacheBytes, long refreshMillis,
                                  Telemetry telemetry, DiskChunkStore disk) {
        if (!Files.isDirectory(store.root().resolve("manifests"))) {
            LOG.warning(store.root() + " has no manifests/ directory yet; the tree stays empty until one appears");
        }
        StoreTree tree = new StoreTree(store, new ModelDirectory(views));
        BlobMappings mappings = new BlobMappings(1024);
        ChunkCache chunks = new ChunkCache(cacheBytes, disk);     // native memory, not the heap
        BlobResolver resolver = BlobResolver.forStore(store, mappings);
        ScheduledExecutorService refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "modelfs-refresh");
            t.setDaemon(true);
            return t;
        });
        refresher.scheduleWithFixedDelay(() -> {
            try {
                tree.refresh();
            } catch (RuntimeException | Error e) {         // an Error must not end the refreshes for good
                LOG.warning("refresh failed: " + e);
            }
        }, refreshMillis, refreshMillis, TimeUnit.MILLISECONDS);
        return new ServedTree(tree, mappings, resolver, chunks, ReadAhead.forCores(), refresher, telemetry);
    }

    public StoreTree tree() {
        return tree;
    }

    public BlobResolver resolver() {
        return resolver;
    }

    public ChunkCache chunks() {
        return chunks;
    }

    /**
     * What was converted since start, for the front ends' last line: {@code "12 chunks converted, 11 ahead of
     * readers"}, with a cache directory {@code "12 chunks converted, 30 read from and 12 written to the cache
     * directory, 11 ahead of readers; 1 files served from and 1 assembled in the cache directory"}.
     */
    public String conversionSummary() {
        String s = chunks.conversions() + " chunks converted";
        DiskChunkStore disk = chunks.disk();
        if (disk != null) {
            s += ", " + disk.hits() + " read from and " + disk.writes() + " written to the cache directory";
        }
        s += ", " + readAhead.chunksAhead() + " ahead of readers";
        if (complete == null) {
            return s;
        }
        ConvertAhead a = ahead();
        return s + "; " + complete.summary() + (a == null ? "" : ", " + a.converted() + " of them converted ahead");
    }

    /**
     * The policy a front end showing every file as owned by {@code uid}:{@code gid} answers with: it reports to this
     * tree's telemetry and opens converted files once {@link #conversions()} lets it.
     */
    public ServePolicy policy(long uid, long gid) {
        return new ServePolicy(tree.store().root(), resolver, chunks, readAhead, uid, gid, telemetry, complete, conversions, failures);
    }

    /**
     * A policy for a front end's own warm-up traffic ({@code fuse.MountSession}'s private {@code ModelFs},
     * {@code nfs.NfsSession}'s private loopback server): the same answers over the same tree and caches, reported to
     * nothing (warm-up reads are not a client's) and never held by {@link #conversions()} (a warm-up does not wait for
     * itself); its failures share the tree's {@link FailureLog}, so a file a warm-up and a client both fail on is
     * logged once.
     */
    public ServePolicy warmupPolicy(long uid, long gid) {
        return new ServePolicy(tree.store().root(), resolver, chunks, readAhead, uid, gid, Telemetry.NONE, complete,
                new ConversionGate(), failures);
    }

    /**
     * The gate every {@link #policy} opens converted files through: held by a front end while its warm-up runs
     * after it began serving, released when the warm-up is done (docs/DESIGN.md §2.8).
     */
    public ConversionGate conversions() {
        return conversions;
    }

    /**
     * Starts converting models' most loaded files into the cache directory ahead of readers ({@link ConvertAhead}), once
     * {@link #conversions()} lets conversions start; nothing without a cache directory. Idempotent.
     */
    public synchronized void convertAhead() {
        if (complete != null && ahead == null && !closed) {
            ahead = ConvertAhead.start(tree, resolver, chunks.disk(), complete, conversions);
        }
    }

    /** Files converted ahead and installed whole since start: 0 before {@link #convertAhead} and without a cache directory. */
    public long convertedAhead() {
        ConvertAhead a = ahead();
        return a == null ? 0 : a.converted();
    }

    /** Converting ahead, once {@link #convertAhead} started it; null before and without a cache directory (tests). */
    synchronized ConvertAhead ahead() {
        return ahead;
    }

    /** The complete converted files of the cache directory, or null without one (tests). */
    CompleteFileServing completeFiles() {
        return complete;
    }

    public Telemetry telemetry() {
        return telemetry;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        refresher.shutdownNow();
        if (ahead != null && !ahead.stop(AHEAD_STOP)) {
            // it may still read the mappings and chunks: they stay (the process is ending)
            LOG.warning("converting ahead did not stop within " + AHEAD_STOP.toSeconds() + " s");
            return;
        }
        if (complete != null) {
            complete.close();
        }
        readAhead.close();
        mappings.close();
        chunks.close();
    }
}
