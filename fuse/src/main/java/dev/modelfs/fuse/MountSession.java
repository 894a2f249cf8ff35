package dev.modelfs.fuse;

import dev.modelfs.cache.DiskChunkStore;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.telemetry.Telemetry;
import dev.modelfs.tree.ModelView;
import dev.modelfs.serve.FrontEnd;
import dev.modelfs.serve.ServedTree;
import dev.modelfs.tree.StoreTree;
import dev.modelfs.warmup.BackgroundWarmup;
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
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;

/**
 * One live mount: the served tree ({@link ServedTree}: store snapshot, refresher, blob mappings, chunk
 * cache) and the FUSE session. {@link #stop} (and {@link #close()}) stops new opens at once, serves open
 * files until they are closed or the grace period ends, then unmounts and releases everything; it is
 * idempotent. The mount serves once {@link #mount} returns; its warm-up runs behind it once {@link #warmUp} is called
 * (docs/DESIGN.md §2.8), and a stop ends the warm-up before it releases the mappings the warm-up reads.
 */
public final class MountSession implements FrontEnd {
    private static final Logger LOG = Logger.getLogger(MountSession.class.getName());

    private final Path mountpoint;
    private final ServedTree served;
    /** The file system (its callbacks are held by the workers while mounted); stopping tells it to refuse opens. */
    private final ModelFs fs;
    private final FuseWorkers workers;
    private volatile boolean closed;

    private final MountOptions opts;
    /** The warm-up running behind the mount, once {@link #warmUp} started it (null before, and without one). */
    private BackgroundWarmup warmup;

    private MountSession(Path mountpoint, ServedTree served, ModelFs fs, FuseWorkers workers, MountOptions opts) {
        this.fs = fs;
        this.mountpoint = mountpoint;
        this.served = served;
        this.workers = workers;
        this.opts = opts;
    }

    /**
     * Builds the tree over {@code store} and mounts it at {@code mountpoint}, clearing a stale mount first; the mount
     * serves when this returns. Its warm-up ({@link #warmUp}) is started by the caller once it has said so.
     */
    public static MountSession mount(OllamaStore store, Path mountpoint, MountOptions opts, List<ModelView> views) throws IOException {
        return mount(store, mountpoint, opts, views, Telemetry.NONE);
    }

    /** The same, reporting what the mount serves to {@code telemetry} (the warm-up's own reads never reach it). */
    public static MountSession mount(OllamaStore store, Path mountpoint, MountOptions opts, List<ModelView> views,
                                     Telemetry telemetry) throws IOException {
        Path mp = mountpoint.toAbsolutePath().normalize();
        clearStale(mp);
        if (!Files.isDirectory(mp)) {
            throw new NoSuchFileException(mp + " (mount point must be an existing directory)");
        }
        DiskChunkStore disk = opts.cacheDir() == null ? null : new DiskChunkStore(opts.cacheDir(), opts.cacheDirBytes(),
                DiskChunkStore.queueFor(opts.cacheBytes()));
        ServedTree served = ServedTree.open(store, views, opts.cacheBytes(), opts.refreshMillis(), telemetry, disk);
        ModelFs fs = new ModelFs(served.tree(), served.policy(opts.uid(), opts.gid()));
        FuseWorkers workers;
        try {
            List<String> args = new ArrayList<>();
            if (opts.debug()) {
                args.add("-d");
            }
            args.add(mp.toString());
            args.addAll(List.of(opts.fuseArgs()));
            workers = FuseWorkers.start(fs, args, opts.threads(), opts.kernelPassthrough(), opts.ioUring());
        } catch (IOException | RuntimeException e) {
            served.close();
            throw new IOException("cannot mount " + mp + ": " + e.getMessage(), e);
        }
        ReadAheadWindow.apply(mp, opts.readAheadKib());
        return new MountSession(mp, served, fs, workers, opts);
    }

    /**
     * Starts the warm-up behind the mount, unless the options turn it off or the mount is stopping
     * ({@link KernelWarmup}: the kernels and the read path, the served chunk cache's buffers faulted in, then the FUSE
     * read path through a private {@link ModelFs}), ending by {@link MountOptions#warmup()} of wall time; until it is
     * done, opens of converted files wait for it ({@link dev.modelfs.serve.ConversionGate}). Idempotent.
     */
    @Override
    public synchronized void warmUp() {
        if (opts.warmup().isZero() || warmup != null || closed) {
            convertAhead();
            return;
        }
        WarmupDeadline deadline = WarmupDeadline.after(opts.warmup());
        served.conversions().hold(deadline.atNanos());
        convertAhead();                     // behind the warm-up: it waits for the gate held just now
        KernelWarmup.Budget budget = KernelWarmup.Budget.DEFAULT;
        warmup = BackgroundWarmup.start(stop -> {
            KernelWarmup.beforeServing(served.tree(), served.resolver(), budget.withJitWait(Duration.ZERO), stop, deadline);
            if (!stop.getAsBoolean()) {
                KernelWarmup.prefault(served.chunks());
            }
            if (!stop.getAsBoolean()) {
                warmFuse(new ModelFs(served.tree(), served.warmupPolicy(opts.uid(), opts.gid())), served.tree(), budget,
                        deadline, opts.ioUring(), stop);
            }
        }, served.conversions()::release);
    }

    /** Starts converting ahead of readers when the options ask ({@link MountOptions#convertAhead()}). */
    private void convertAhead() {
        if (opts.convertAhead() && !closed) {
            served.convertAhead();
        }
    }

    /**
     * The FUSE half of the warm-up ({@link FuseReadWarmup}: reads through a {@code read_buf} upcall stub of
     * {@code privateFs}, a {@link ModelFs} of its own over the served tree that reports to no metric, and the workers'
     * loop over a session never mounted) in passes until the JIT has nothing left to compile for it
     * ({@link JitQueue#settle}), ending by {@code deadline} or once {@code stop} holds.
     */
    private static void warmFuse(ModelFs privateFs, StoreTree tree, KernelWarmup.Budget budget, WarmupDeadline deadline,
                                 boolean ioUring, BooleanSupplier stop) {
        long t0 = System.nanoTime();
        int files = 0;
        BooleanSupplier end = deadline.or(stop);
        // passes run on threads of their own (JitQueue): the rings' warm-up entries are shared, used by one at a time
        try (Arena arena = Arena.ofShared()) {
            MemorySegment readBuf = ReadBufUpcall.stub(privateFs, arena);
            RingEntries ring = ioUring ? RingEntries.forWarmup(privateFs, arena) : null;
            List<Path> plain = KernelWarmup.plainFilesToRead(tree, budget.maxModels(), end);
            int[] read = {0};
            JitQueue.settle(() -> {
                read[0] = FuseReadWarmup.run(privateFs, readBuf, plain, ring, end);
                FuseReadWarmup.runWorkerLoop();
            }, FuseReadWarmup.PASSES, deadline.cap(budget.jitWait()), stop);
            files = read[0];
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | ReflectiveOperationException | RuntimeException | Error e) {         // never a reason to stop serving
            LOG.fine("FUSE read warm-up stopped: " + e);
        }
        KernelWarmup.frontEndDone("FUSE", files, t0, budget.withJitWait(deadline.cap(budget.jitWait())), stop);
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


    /** How long {@link #stop} waits for a running warm-up to end (it checks its stop condition between reads). */
    static final Duration WARMUP_STOP = Duration.ofSeconds(30);

    /** The warm-up started by {@link #warmUp}, or null (tests wait for it to end). */
    synchronized BackgroundWarmup warmup() {
        return warmup;
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
        // the warm-up reads the served tree's mappings: it ends before they are released (a stop flag, no interrupt)
        boolean warmupEnded = warmup == null || warmup.stop(WARMUP_STOP);
        if (!warmupEnded) {
            LOG.warning("the warm-up of " + mountpoint + " did not stop within " + WARMUP_STOP.toSeconds() + " s");
        }
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
        if (!warmupEnded) {
            return;                     // likewise for the warm-up
        }
        served.close();
    }
}
