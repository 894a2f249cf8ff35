package dev.modelfs.fuse;

import dev.modelfs.cache.BlobMappings;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.view.BlobResolver;
import dev.modelfs.view.ModelDirectory;
import dev.modelfs.view.ModelView;
import dev.modelfs.view.ReadAhead;
import dev.modelfs.view.StoreTree;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * One live mount: the store snapshot, its refresher, the blob mappings, the chunk cache and the FUSE
 * session. {@link #close()} unmounts (politely, then lazily) and releases everything; it is
 * idempotent and safe to call from a signal handler or shutdown hook.
 */
public final class MountSession implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(MountSession.class.getName());

    private final Path mountpoint;
    private final StoreTree tree;
    private final BlobMappings mappings;
    private final ModelFs fs;
    private final ScheduledExecutorService refresher;
    private final FuseWorkers workers;
    private final ReadAhead readAhead;
    private final ChunkCache chunks;
    private boolean closed;

    private MountSession(Path mountpoint, StoreTree tree, BlobMappings mappings, ModelFs fs, ScheduledExecutorService refresher,
                         FuseWorkers workers, ReadAhead readAhead, ChunkCache chunks) {
        this.mountpoint = mountpoint;
        this.tree = tree;
        this.mappings = mappings;
        this.fs = fs;
        this.refresher = refresher;
        this.workers = workers;
        this.readAhead = readAhead;
        this.chunks = chunks;
    }

    /** Builds the tree over {@code store} and mounts it at {@code mountpoint}, clearing a stale mount first. */
    public static MountSession mount(OllamaStore store, Path mountpoint, MountOptions opts, List<ModelView> views) throws IOException {
        Path mp = mountpoint.toAbsolutePath().normalize();
        clearStale(mp);
        if (!Files.isDirectory(mp)) {
            throw new NoSuchFileException(mp + " (mount point must be an existing directory)");
        }
        if (!Files.isDirectory(store.root().resolve("manifests"))) {
            LOG.warning(store.root() + " has no manifests/ directory yet; the mount stays empty until one appears");
        }
        StoreTree tree = new StoreTree(store, new ModelDirectory(views));
        BlobMappings mappings = new BlobMappings(1024);
        ChunkCache chunks = new ChunkCache(opts.cacheBytes());     // native memory, not the heap
        ReadAhead readAhead = ReadAhead.forCores();
        BlobResolver resolver = ref -> {
            Path p = store.blobPath(ref.digest()).orElseThrow(() -> new NoSuchFileException(ref.digest().fileName(), null, "blob missing"));
            return mappings.acquire(ref.digest().hex(), p, ref.expectedSize());
        };
        ModelFs fs = new ModelFs(tree, resolver, chunks, readAhead, opts.uid(), opts.gid());
        ScheduledExecutorService refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "modelfs-refresh");
            t.setDaemon(true);
            return t;
        });
        refresher.scheduleWithFixedDelay(() -> {
            try {
                tree.refresh();
            } catch (RuntimeException e) {
                LOG.warning("refresh failed: " + e);
            }
        }, opts.refreshMillis(), opts.refreshMillis(), TimeUnit.MILLISECONDS);
        FuseWorkers workers;
        try {
            List<String> args = new ArrayList<>();
            if (opts.debug()) {
                args.add("-d");
            }
            args.add(mp.toString());
            args.addAll(List.of(opts.fuseArgs()));
            workers = FuseWorkers.start(fs, args, opts.threads());
        } catch (IOException | RuntimeException e) {
            refresher.shutdownNow();
            readAhead.close();
            chunks.close();
            throw new IOException("cannot mount " + mp + ": " + e.getMessage(), e);
        }
        return new MountSession(mp, tree, mappings, fs, refresher, workers, readAhead, chunks);
    }

    /** If {@code mp} is a mount whose server is gone, unmount it (lazily). */
    public static void clearStale(Path mp) throws IOException {
        if (MountTable.isMounted(mp)) {
            if (MountTable.isStale(mp)) {
                LOG.warning("clearing stale mount at " + mp);
                if (!MountTable.fusermount(mp, false) && !MountTable.fusermount(mp, true)) {
                    throw new IOException("stale mount at " + mp + " could not be cleared; run: fusermount -u -z " + mp);
                }
            } else {
                throw new IOException(mp + " is already mounted; unmount it first: fusermount -u " + mp);
            }
        }
    }

    public Path mountpoint() {
        return mountpoint;
    }

    public StoreTree tree() {
        return tree;
    }

    public ModelFs fs() {
        return fs;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        refresher.shutdownNow();
        if (!MountTable.unmount(mountpoint, 10_000)) {
            LOG.warning("could not unmount " + mountpoint + "; run: fusermount -u -z " + mountpoint);
        }
        if (!workers.stop(5_000)) {   // they end once the kernel mount is gone
            LOG.warning("FUSE workers still running after unmounting " + mountpoint);
            return;                     // their mappings stay: a busy worker may still read them
        }
        readAhead.close();
        mappings.close();
        chunks.close();
    }
}
