package dev.modelfs.fuse;

import dev.modelfs.store.OllamaStore;
import dev.modelfs.telemetry.Telemetry;
import dev.modelfs.tree.ModelView;
import dev.modelfs.serve.ServedTree;
import dev.modelfs.tree.StoreTree;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.logging.Logger;

/**
 * One live mount: the served tree ({@link ServedTree}: store snapshot, refresher, blob mappings, chunk
 * cache) and the FUSE session. {@link #close()} unmounts (politely, then lazily) and releases everything; it is
 * idempotent and safe to call from a signal handler or shutdown hook.
 */
public final class MountSession implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(MountSession.class.getName());

    private final Path mountpoint;
    private final ServedTree served;
    private final FuseWorkers workers;
    private final IntSupplier openFiles;
    private boolean closed;

    private MountSession(Path mountpoint, ServedTree served, FuseWorkers workers, IntSupplier openFiles) {
        this.openFiles = openFiles;
        this.mountpoint = mountpoint;
        this.served = served;
        this.workers = workers;
    }

    /** Builds the tree over {@code store} and mounts it at {@code mountpoint}, clearing a stale mount first. */
    public static MountSession mount(OllamaStore store, Path mountpoint, MountOptions opts, List<ModelView> views) throws IOException {
        return mount(store, mountpoint, opts, views, Telemetry.NONE);
    }

    /** The same, reporting what the mount serves to {@code telemetry}. */
    public static MountSession mount(OllamaStore store, Path mountpoint, MountOptions opts, List<ModelView> views,
                                     Telemetry telemetry) throws IOException {
        Path mp = mountpoint.toAbsolutePath().normalize();
        clearStale(mp);
        if (!Files.isDirectory(mp)) {
            throw new NoSuchFileException(mp + " (mount point must be an existing directory)");
        }
        ServedTree served = ServedTree.open(store, views, opts.cacheBytes(), opts.refreshMillis(), telemetry);
        ModelFs fs = new ModelFs(served.tree(), served.policy(opts.uid(), opts.gid()));
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
            served.close();
            throw new IOException("cannot mount " + mp + ": " + e.getMessage(), e);
        }
        return new MountSession(mp, served, workers, fs::openFiles);   // the workers hold the file system (its callbacks) while mounted
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
        return served.tree();
    }

    /** The tree, mappings and chunk cache this mount serves. */
    public ServedTree served() {
        return served;
    }

    /** Files open on the mount now. */
    public int openFiles() {
        return openFiles.getAsInt();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (!MountTable.unmount(mountpoint, 10_000)) {
            LOG.warning("could not unmount " + mountpoint + "; run: fusermount -u -z " + mountpoint);
        }
        if (!workers.stop(5_000)) {   // they end once the kernel mount is gone
            LOG.warning("FUSE workers still running after unmounting " + mountpoint);
            return;                     // their mappings stay: a busy worker may still read them
        }
        served.close();
    }
}
