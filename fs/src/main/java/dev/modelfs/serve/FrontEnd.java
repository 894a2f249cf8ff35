package dev.modelfs.serve;

import java.time.Duration;

/**
 * A running front end over one {@link ServedTree}: the FUSE mount ({@code fuse.MountSession}) or the NFS server
 * ({@code nfs.NfsSession}). The command line drives every front end through this one life cycle (start, serve
 * until a signal or until the front end stops serving by itself, stop with a grace period), so signals, metrics
 * and the stop are handled once for both (docs/DESIGN.md §2.11).
 *
 * <p>Invariants: {@link #served()} is the same object for the session's whole life; {@link #stop} is idempotent and
 * releases everything the session opened, including the served tree; after it, {@link #serving()} is false.
 */
public interface FrontEnd extends AutoCloseable {
    /** The default grace period of {@link #stop}: open files are served this long after a stop begins. */
    Duration DEFAULT_GRACE = Duration.ofMinutes(5);

    /** The tree, mappings and chunk cache this front end serves. */
    ServedTree served();

    /** Files open through this front end now. */
    int openFiles();

    /** Whether the front end still serves (a FUSE mount unmounted from outside does not). */
    boolean serving();

    /**
     * Stops: no new opens; files already open are served until closed or until {@code grace} ends (front ends
     * without open state, NFS, stop at once); then everything is released.
     */
    void stop(Duration grace);

    /**
     * Starts the front end's warm-up behind the served tree (docs/DESIGN.md §2.8): called once, after the front end
     * serves and has said so. While it runs, the tree, attributes and files without conversions are served as usual
     * and opens of converted files wait for it ({@link ConversionGate}), at most until its wall-clock end; a
     * {@link #stop} ends it first. Front ends without a warm-up (or with it turned off) do nothing.
     */
    default void warmUp() {
    }

    /** What this front end converted, for its last log line (see {@link ServedTree#conversionSummary()}). */
    default String conversionSummary() {
        return served().conversionSummary();
    }

    /** {@link #stop} with the {@link #DEFAULT_GRACE default grace period}. */
    @Override
    default void close() {
        stop(DEFAULT_GRACE);
    }
}
