package dev.modelfs.nfs;

import dev.modelfs.cache.DiskChunkStore;
import dev.modelfs.serve.FrontEnd;
import dev.modelfs.serve.ServedTree;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.telemetry.Telemetry;
import dev.modelfs.tree.ModelView;
import dev.modelfs.warmup.BackgroundWarmup;
import dev.modelfs.warmup.JitQueue;
import dev.modelfs.warmup.KernelWarmup;
import dev.modelfs.warmup.WarmupDeadline;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;

/**
 * The NFS front end assembled, as {@code fuse.MountSession} assembles the FUSE one: the served tree over the store
 * and the {@link NfsServer}, serving when {@link #start} returns; then, once the caller has said so, the warm-up
 * behind it ({@link #warmUp}: the kernels and the read path, then READs of a loopback client of its own,
 * {@link LoopbackWarmup}, against a private server that reports to no metric), so that a client's first reads of
 * converted files are neither cold nor counted with the warm-up's, and start-up does not wait for it.
 *
 * <p>Invariants: once {@link #start} returns the server answers on {@link #address()}; the session owns the served
 * tree and the server and releases both on {@link #stop}, which ends the warm-up first and is idempotent. NFS has no
 * open state a client could lose, so a stop does not wait for a grace period.
 */
public final class NfsSession implements FrontEnd {
    private static final Logger LOG = Logger.getLogger(NfsSession.class.getName());
    /** What to serve and how: the server's {@link NfsServer.Config}, the chunk cache, the refresh period, the disk cache. */
    public record Options(NfsServer.Config server, long cacheBytes, long refreshMillis, DiskChunkStore disk, Duration warmup,
                          boolean convertAhead) {
        /** Options that do not convert ahead of readers. */
        public Options(NfsServer.Config server, long cacheBytes, long refreshMillis, DiskChunkStore disk, Duration warmup) {
            this(server, cacheBytes, refreshMillis, disk, warmup, false);
        }
    }

    /** How long {@link #stop} waits for a running warm-up to end. */
    static final Duration WARMUP_STOP = Duration.ofSeconds(30);

    private final NfsServer server;
    private final ServedTree served;
    private final Options opts;
    private final BooleanSupplier stopRequested;
    private volatile boolean stopped;
    /** The warm-up behind the server, once {@link #warmUp} started it (null before, and without one). */
    private BackgroundWarmup warmup;

    private NfsSession(NfsServer server, ServedTree served, Options opts, BooleanSupplier stopRequested) {
        this.server = server;
        this.served = served;
        this.opts = opts;
        this.stopRequested = stopRequested;
    }

    /**
     * Serves {@code store} over NFS; its warm-up ({@link #warmUp}) ends early once {@code stopRequested} holds (a
     * signal). Every call and read of a client is reported to {@code telemetry}, from the first.
     */
    public static NfsSession start(OllamaStore store, Options opts, List<ModelView> views, Telemetry telemetry,
                                   BooleanSupplier stopRequested) throws IOException {
        ServedTree served = ServedTree.open(store, views, opts.cacheBytes(), opts.refreshMillis(), telemetry, opts.disk());
        NfsServer server;
        try {
            server = NfsServer.start(served, opts.server());
        } catch (IOException | RuntimeException e) {
            served.close();
            throw e;
        }
        return new NfsSession(server, served, opts, stopRequested);
    }

    /**
     * Starts the warm-up behind the server unless the options turn it off or the server stops, ending by
     * {@link Options#warmup()} of wall time; until it is done, the first READ of a converted file waits for it
     * ({@link dev.modelfs.serve.ConversionGate}). Idempotent.
     */
    @Override
    public synchronized void warmUp() {
        if (opts.warmup().isZero() || warmup != null || stopped) {
            convertAhead();
            return;
        }
        WarmupDeadline deadline = WarmupDeadline.after(opts.warmup());
        served.conversions().hold(deadline.atNanos());
        convertAhead();                     // behind the warm-up: it waits for the gate held just now
        KernelWarmup.Budget budget = KernelWarmup.Budget.DEFAULT;
        warmup = BackgroundWarmup.start(own -> {
            BooleanSupplier stop = () -> own.getAsBoolean() || stopRequested.getAsBoolean();
            KernelWarmup.beforeServing(served.tree(), served.resolver(), budget.withJitWait(Duration.ZERO), stop, deadline);
            if (!stop.getAsBoolean()) {
                KernelWarmup.prefault(served.chunks());
            }
            if (!stop.getAsBoolean()) {
                warmReads(served, opts.server(), budget, deadline, stop);
            }
        }, served.conversions()::release);
    }

    /** Starts converting ahead of readers when the options ask ({@link Options#convertAhead()}). */
    private void convertAhead() {
        if (opts.convertAhead() && !stopped) {
            served.convertAhead();
        }
    }

    /**
     * The NFS half of the warm-up ({@link LoopbackWarmup}, against a private server over the same tree:
     * {@link NfsServer#forWarmup}) in passes until the JIT has nothing left to compile for it ({@link JitQueue#settle}),
     * ending by {@code deadline} or once {@code stop} holds.
     */
    private static void warmReads(ServedTree served, NfsServer.Config config, KernelWarmup.Budget budget,
                                  WarmupDeadline deadline, BooleanSupplier stop) {
        long t0 = System.nanoTime();
        List<String> files = KernelWarmup.plainFilesToRead(served.tree(), budget.maxModels(), deadline.or(stop)).stream().map(Path::toString).toList();
        int[] read = {0};
        try (NfsServer own = NfsServer.forWarmup(served, config.uid(), config.gid())) {
            JitQueue.settle(() -> read[0] = LoopbackWarmup.run(own.address(), files, config.uid(), config.gid(), deadline.or(stop)),
                    LoopbackWarmup.PASSES, deadline.cap(budget.jitWait()), stop);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException e) {               // never a reason to stop serving
            LOG.fine("NFS read warm-up stopped: " + e);
        }
        KernelWarmup.frontEndDone("NFS", read[0], t0, budget.withJitWait(deadline.cap(budget.jitWait())), stop);
    }

    /** Where the server listens (the actual port when the configured one was 0). */
    public InetSocketAddress address() {
        return server.address();
    }

    @Override
    public ServedTree served() {
        return served;
    }

    @Override
    public int openFiles() {
        return server.openFiles();
    }

    @Override
    public boolean serving() {
        return !stopped;
    }

    @Override
    public synchronized void stop(Duration grace) {
        if (stopped) {
            return;
        }
        stopped = true;
        // the warm-up reads the served tree's mappings: it ends before the server releases them
        if (warmup != null && !warmup.stop(WARMUP_STOP)) {
            LOG.warning("the NFS warm-up did not stop within " + WARMUP_STOP.toSeconds() + " s; the server's mappings stay");
            return;
        }
        server.close();
    }
}
