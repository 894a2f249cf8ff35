package dev.modelfs.warmup;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The wall-clock end of a front end's whole warm-up (the kernels, the read path and the front end's own reads), which
 * runs behind the tree it already serves: opens of converted files wait for the warm-up at most until
 * {@link #DEFAULT_WALL} after it began, however busy the machine is (docs/DESIGN.md §2.8). What is not warm by then
 * is compiled while the first clients read. The warm-up's other
 * bounds ({@link KernelWarmup.Budget}: CPU time, passes, waits) still apply inside it.
 *
 * <p>The kernels' part ends by {@link #KERNELS} of the wall time and the read path's by {@link #READ_PATH} ({@link #phase}),
 * so that on a busy machine each part still runs a little: the kernels alone would otherwise take all of it and the
 * read path, whose first-read gain is the larger, none.
 *
 * @param startNanos the {@link System#nanoTime()} at which the warm-up began
 * @param atNanos    the {@link System#nanoTime()} at which the warm-up ends
 */
public record WarmupDeadline(long startNanos, long atNanos) {
    /** The share of the wall time by which the kernels' part ends. */
    public static final double KERNELS = 0.4;
    /** The share of the wall time by which the read path's part ends; the front end's own reads have the rest. */
    public static final double READ_PATH = 0.7;

    /**
     * A front end's warm-up ends this long after it began: on a quiet machine the warm-up of a store of a few models
     * is done sooner (3 s cut it short there and the first read of a converted file fell from 0.9x to 0.2x of a warm
     * one: BENCHMARKS.md, stop 32); on a busy one (both CPUs taken) it stops here, so a converted file's first open waits
     * a bounded time (the budgets alone took 13 s). The mount itself no longer waits for it: it serves first.
     */
    public static final Duration DEFAULT_WALL = Duration.ofSeconds(8);

    /** The deadline {@code wall} from now. */
    public static WarmupDeadline after(Duration wall) {
        long now = System.nanoTime();
        return new WarmupDeadline(now, now + wall.toNanos());
    }

    /** No deadline (tests that warm up fully). */
    public static WarmupDeadline none() {
        return new WarmupDeadline(Long.MAX_VALUE, Long.MAX_VALUE);
    }

    /** The deadline of a part that ends by {@code share} (0 to 1) of the wall time; no deadline stays none. */
    public WarmupDeadline phase(double share) {
        if (atNanos == Long.MAX_VALUE) {
            return this;
        }
        return new WarmupDeadline(startNanos, startNanos + (long) ((atNanos - startNanos) * share));
    }

    /** Whether the deadline has passed. */
    public boolean passed() {
        return atNanos != Long.MAX_VALUE && System.nanoTime() - atNanos >= 0;
    }

    /** {@code wanted}, or the time left before the deadline when that is shorter (never negative). */
    public Duration cap(Duration wanted) {
        if (atNanos == Long.MAX_VALUE) {
            return wanted;
        }
        long left = Math.max(0, atNanos - System.nanoTime());
        return left < wanted.toNanos() ? Duration.ofNanos(left) : wanted;
    }

    /** The nanoTime a loop bounded by {@code own} (also a nanoTime) stops at: the earlier of the two. */
    public long earlierOf(long own) {
        return atNanos == Long.MAX_VALUE ? own : (own - atNanos < 0 ? own : atNanos);
    }

    /** A stop condition that holds once {@code stop} does or the deadline has passed. */
    public BooleanSupplier or(BooleanSupplier stop) {
        return () -> stop.getAsBoolean() || passed();
    }
}
