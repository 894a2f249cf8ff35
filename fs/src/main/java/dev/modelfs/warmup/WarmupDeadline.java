package dev.modelfs.warmup;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The wall-clock end of a front end's whole warm-up (the kernels, the read path and the front end's own reads): a
 * front end starts serving at most {@link #DEFAULT_WALL} after its warm-up began, however busy the machine is
 * (docs/DESIGN.md §2.8). What is not warm by then is compiled while the first clients read. The warm-up's other
 * bounds ({@link KernelWarmup.Budget}: CPU time, passes, waits) still apply inside it.
 *
 * @param atNanos the {@link System#nanoTime()} at which the warm-up ends
 */
public record WarmupDeadline(long atNanos) {
    /**
     * A front end's warm-up ends this long after it began: on a quiet machine the warm-up of a store of a few models
     * is done sooner; on a busy one (both CPUs taken) it stops here, so the mount appears within about 3 s of the
     * command (the JVM's start and the store's listing come first). Measured in BENCHMARKS.md.
     */
    public static final Duration DEFAULT_WALL = Duration.ofSeconds(2);

    /** The deadline {@code wall} from now. */
    public static WarmupDeadline after(Duration wall) {
        return new WarmupDeadline(System.nanoTime() + wall.toNanos());
    }

    /** No deadline (tests that warm up fully). */
    public static WarmupDeadline none() {
        return new WarmupDeadline(Long.MAX_VALUE);
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
