package dev.modelfs.fuse;

import dev.modelfs.cache.DiskChunkStore;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.telemetry.GatedTelemetry;
import dev.modelfs.telemetry.Telemetry;
import dev.modelfs.tree.ModelView;
import dev.modelfs.serve.FrontEnd;
import dev.modelfs.serve.ServedTree;
import dev.modelfs.tree.StoreTree;
import dev.modelfs.warmup.JitQueue;
import dev.modelfs.warmup.KernelWarmup;
import dev.modelfs.warmup.WarmupDeadline;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

/**
 * One live mount: the served tree ({@link ServedTree}: store snapshot, refresher, blob mappings, chunk
 * cache) and the FUSE session. {@link #stop} (and {@link #close()}) stops new opens at once, serves open
 * files until they are closed or the grace period ends, then unmounts and releases everything; it is
 * idempotent.
 */
public final class MountSession implements FrontEnd {
    private static final Logger LOG = Logger.getLogger(MountSession.class.getName());

    private final Path mountpoint;
    private final ServedTree served;
    /** The file system (its callbacks are held by the workers while mounted); stopping tells it to refuse opens. */
    private final ModelFs fs;
    private final FuseWorkers workers;
    private volatile boolean closed;

    private MountSession(Path mountpoint, ServedTree served, ModelFs fs, FuseWorkers workers) {
        this.fs = fs;
        this.mountpoint = mountpoint;
        this.served = served;
        this.workers = workers;
    }

    /**
     * Builds the tree over {@code store}, warms it up unless {@code opts} say not to ({@link KernelWarmup}: the mount
     * appears once the first reads will not run cold), and mounts it at {@code mountpoint}, clearing a stale mount first.
     */
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
        DiskChunkStore disk = opts.cacheDir() == null ? null : new DiskChunkStore(opts.cacheDir(), opts.cacheDirBytes(),
                DiskChunkStore.queueFor(opts.cacheBytes()));
        GatedTelemetry gate = GatedTelemetry.closed(telemetry);         // opened once the warm-up is done: its reads are not a client's
        ServedTree served = ServedTree.open(store, views, opts.cacheBytes(), opts.refreshMillis(), gate, disk);
        KernelWarmup.Budget budget = KernelWarmup.Budget.DEFAULT;
        WarmupDeadline deadline = WarmupDeadline.after(opts.warmup());
        if (!opts.warmup().isZero()) {
            KernelWarmup.beforeServing(served.tree(), served.resolver(), budget.withJitWait(Duration.ZERO), () -> false, deadline);
            KernelWarmup.prefault(served.chunks());
        }
        ModelFs fs = new ModelFs(served.tree(), served.policy(opts.uid(), opts.gid()));
        FuseWorkers workers;
        try {
            List<String> args = new ArrayList<>();
            if (opts.debug()) {
                args.add("-d");
            }
            args.add(mp.toString());
            args.addAll(List.of(opts.fuseArgs()));
            workers = FuseWorkers.start(fs, args, opts.threads(), opts.kernelPassthrough(), opts.ioUring(), readBuf -> {
                if (!opts.warmup().isZero()) {
                    warmFuse(fs, readBuf, served.tree(), budget, deadline, opts.ioUring());
                }
                gate.open();                                            // before the kernel mount exists
            });
        } catch (IOException | RuntimeException e) {
            served.close();
            throw new IOException("cannot mount " + mp + ": " + e.getMessage(), e);
        }
        return new MountSession(mp, served, fs, workers);
    }

    /**
     * The FUSE half of the warm-up ({@link FuseReadWarmup}: reads through {@code read_buf}, and the workers' loop) in
     * passes until the JIT has nothing left to compile for it ({@link JitQueue#settle}), before mounting, ending by
     * {@code deadline}.
     */
    private static void warmFuse(ModelFs fs, MemorySegment readBuf, StoreTree tree, KernelWarmup.Budget budget,
                                 WarmupDeadline deadline, boolean ioUring) {
        long t0 = System.nanoTime();
        int files = 0;
        // passes run on threads of their own (JitQueue): the rings' warm-up entries are shared, used by one at a time
        try (Arena arena = Arena.ofShared()) {
            RingEntries ring = ioUring ? RingEntries.forWarmup(fs, arena) : null;
            List<Path> plain = KernelWarmup.plainFilesToRead(tree, budget.maxModels(), deadline::passed);
            int[] read = {0};
            JitQueue.settle(() -> {
                read[0] = FuseReadWarmup.run(fs, readBuf, plain, ring);
                FuseReadWarmup.runWorkerLoop();
            }, FuseReadWarmup.PASSES, deadline.cap(budget.jitWait()));
            files = read[0];
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException | Error e) {         // never a reason not to mount
            LOG.fine("FUSE read warm-up stopped: " + e);
        }
        KernelWarmup.frontEndDone("FUSE", files, t0, budget.withJitWait(deadline.cap(budget.jitWait())));
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
    @Override
    public ServedTree served() {
        return served;
    }

    /** Files open on the mount now. */
    @Override
    public int openFiles() {
        return fs.openFiles();
    }


    /** The default grace period of {@link #stop} ({@link FrontEnd#DEFAULT_GRACE}). */
    public static final Duration DEFAULT_GRACE = FrontEnd.DEFAULT_GRACE;

    /** Whether the mount is still in the mount table (false once unmounted from outside, or stopped). */
    @Override
    public boolean serving() {
        return !closed && MountTable.isMounted(mountpoint);
    }

    /**
     * Stops gracefully (docs/SEMANTICS.md "Stopping"): new opens fail at once (ESHUTDOWN); files already
     * open keep being served until their readers close them or {@code grace} ends; then the mount is
     * unmounted (politely, else lazily) and everything is released. Files still open when the grace period
     * ends are cut off (their readers get ENOTCONN once the process exits). Idempotent; blocks for at most
     * about {@code grace} plus a few seconds.
     */
    @Override
    public synchronized void stop(Duration grace) {
        if (closed) {
            return;
        }
        closed = true;
        fs.stopOpening();
        long deadline = System.nanoTime() + grace.toNanos();
        if (fs.openFiles() > 0) {
            LOG.info("stopping " + mountpoint + ": no new opens; serving the " + fs.openFiles()
                    + " open files for up to " + grace.toSeconds() + " s");
        }
        // a file closed after a lazy unmount may never be released to us (the kernel drops the connection
        // instead), so the end of the workers counts as "every file closed" too
        while (fs.openFiles() > 0 && workers.running() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        int cutOff = workers.running() ? fs.openFiles() : 0;
        if (cutOff > 0) {
            LOG.warning("grace period of " + grace.toSeconds() + " s over: " + cutOff + " files still open at "
                    + mountpoint + " are cut off");
        }
        if (!MountTable.unmount(mountpoint, cutOff > 0 ? 0 : 2_000)) {
            LOG.warning("could not unmount " + mountpoint + "; run: fusermount -u -z " + mountpoint);
        }
        if (!workers.stop(5_000)) {    // they end once the kernel mount is gone
            LOG.warning("FUSE workers still running after unmounting " + mountpoint);
            return;                     // their mappings stay: a busy worker may still read them
        }
        served.close();
    }
}
