package dev.modelfs.nfs;

import dev.modelfs.cache.DiskChunkStore;
import dev.modelfs.serve.FrontEnd;
import dev.modelfs.serve.ServedTree;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.telemetry.GatedTelemetry;
import dev.modelfs.telemetry.Telemetry;
import dev.modelfs.tree.ModelView;
import dev.modelfs.warmup.JitQueue;
import dev.modelfs.warmup.KernelWarmup;
import dev.modelfs.warmup.WarmupDeadline;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The NFS front end assembled, as {@code fuse.MountSession} assembles the FUSE one: the served tree over the store,
 * the kernel warm-up, the {@link NfsServer}, the NFS read warm-up ({@link LoopbackWarmup}), then the telemetry gate
 * opened, so that a client's first reads are neither cold nor counted with the warm-up's.
 *
 * <p>Invariants: once {@link #start} returns the server answers on {@link #address()}; the session owns the served
 * tree and the server and releases both on {@link #stop}, which is idempotent. NFS has no open state a client could
 * lose, so a stop does not wait for a grace period.
 */
public final class NfsSession implements FrontEnd {
    /** What to serve and how: the server's {@link NfsServer.Config}, the chunk cache, the refresh period, the disk cache. */
    public record Options(NfsServer.Config server, long cacheBytes, long refreshMillis, DiskChunkStore disk, Duration warmup) {}

    private final NfsServer server;
    private final ServedTree served;
    private volatile boolean stopped;

    private NfsSession(NfsServer server, ServedTree served) {
        this.server = server;
        this.served = served;
    }

    /**
     * Serves {@code store} over NFS; the warm-ups end early once {@code stopRequested} holds (a signal during
     * start-up). Telemetry is reported once the warm-up is done.
     */
    public static NfsSession start(OllamaStore store, Options opts, List<ModelView> views, Telemetry telemetry,
                                   BooleanSupplier stopRequested) throws IOException {
        GatedTelemetry gate = GatedTelemetry.closed(telemetry);      // open once the warm-up is done
        ServedTree served = ServedTree.open(store, views, opts.cacheBytes(), opts.refreshMillis(), gate, opts.disk());
        KernelWarmup.Budget budget = KernelWarmup.Budget.DEFAULT;
        WarmupDeadline deadline = WarmupDeadline.after(opts.warmup());
        if (!opts.warmup().isZero()) {
            KernelWarmup.beforeServing(served.tree(), served.resolver(), budget.withJitWait(Duration.ZERO), stopRequested, deadline);
            KernelWarmup.prefault(served.chunks());
        }
        NfsServer server;
        try {
            server = NfsServer.start(served, opts.server());
        } catch (IOException | RuntimeException e) {
            served.close();
            throw e;
        }
        if (!opts.warmup().isZero()) {
            warmReads(server, served, opts.server(), budget, deadline, stopRequested);
        }
        gate.open();
        return new NfsSession(server, served);
    }

    /**
     * The NFS half of the warm-up ({@link LoopbackWarmup}) in passes until the JIT has nothing left to compile for it
     * ({@link JitQueue#settle}), ending by {@code deadline}.
     */
    private static void warmReads(NfsServer server, ServedTree served, NfsServer.Config config, KernelWarmup.Budget budget,
                                  WarmupDeadline deadline, BooleanSupplier stop) {
        long t0 = System.nanoTime();
        List<String> files = KernelWarmup.plainFilesToRead(served.tree(), budget.maxModels(), deadline.or(stop)).stream().map(Path::toString).toList();
        int[] read = {0};
        try {
            JitQueue.settle(() -> read[0] = LoopbackWarmup.run(server.address(), files, config.uid(), config.gid(), deadline.or(stop)),
                    LoopbackWarmup.PASSES, deadline.cap(budget.jitWait()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        KernelWarmup.frontEndDone("NFS", read[0], t0, budget.withJitWait(deadline.cap(budget.jitWait())));
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
    public void stop(Duration grace) {
        stopped = true;
        server.close();
    }
}
