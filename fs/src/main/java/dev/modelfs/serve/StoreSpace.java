package dev.modelfs.serve;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The space of the file system holding the store, as {@code statfs} ({@code df}) and NFS {@code FSSTAT} report it
 * (docs/SEMANTICS.md "File system statistics", "When the store's disk fails"). Asking the store's disk is done on one
 * thread of its own: a request waits for a fresh answer at most {@link #BOUND}, then gets the last answer the disk
 * gave, so a stalled disk never holds a {@code statfs} (and the worker answering it) longer than that.
 *
 * <p>Invariants: at most one question to the disk is in flight at a time (a stalled disk holds one thread, never
 * more); every answer comes from the disk (the last one it gave when it does not answer within the bound); before
 * the disk ever answered (it is asked once on construction, at startup), a request waits for the first answer (or
 * its error) like a plain {@code statvfs}.
 */
final class StoreSpace {
    /** How long a request waits for the disk before it gets the last answer. */
    static final Duration BOUND = Duration.ofSeconds(1);

    /** Reads the space of a path's file system (the store's root in service; a stub in tests). */
    @FunctionalInterface
    interface Probe {
        ServePolicy.Space read() throws IOException;
    }

    private final Probe probe;
    private final Duration bound;
    private CompletableFuture<ServePolicy.Space> inFlight;
    private ServePolicy.Space last;

    StoreSpace(Path storeRoot) {
        this(() -> {
            FileStore fs = Files.getFileStore(storeRoot);
            return new ServePolicy.Space(Math.max(1, fs.getBlockSize()), fs.getTotalSpace(), fs.getUnallocatedSpace(),
                    fs.getUsableSpace());
        }, BOUND);
    }

    /** Asks the disk once right away, so that a stall later has an answer to fall back on. */
    StoreSpace(Probe probe, Duration bound) {
        this.probe = probe;
        this.bound = bound;
        start();
    }

    private synchronized CompletableFuture<ServePolicy.Space> start() {
        if (inFlight == null) {
            CompletableFuture<ServePolicy.Space> asked = new CompletableFuture<>();
            inFlight = asked;
            Thread.ofPlatform().daemon().name("modelfs-statfs").start(() -> ask(asked));
        }
        return inFlight;
    }

    /** The space now, or the last known one when the disk does not answer within the bound. */
    ServePolicy.Space space() throws IOException {
        CompletableFuture<ServePolicy.Space> f;
        ServePolicy.Space known;
        synchronized (this) {
            f = start();
            known = last;
        }
        try {
            return known == null ? f.get() : f.get(bound.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException stalled) {
            return known;
        } catch (ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while asking the store's disk for its space", e);
        }
    }

    private void ask(CompletableFuture<ServePolicy.Space> asked) {
        try {
            ServePolicy.Space s = probe.read();
            synchronized (this) {
                last = s;
                inFlight = null;
            }
            asked.complete(s);
        } catch (IOException | RuntimeException e) {
            synchronized (this) {
                inFlight = null;
            }
            asked.completeExceptionally(e);
        }
    }
}
