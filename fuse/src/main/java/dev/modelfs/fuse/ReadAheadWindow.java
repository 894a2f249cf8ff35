package dev.modelfs.fuse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalInt;
import java.util.logging.Logger;

/**
 * The kernel's read-ahead window of one mount ({@code --read-ahead-kb}): how much of a file the page cache asks for
 * ahead of a sequential reader or around a page fault. The kernel gives a FUSE mount 128 KiB and lets its server only
 * lower that (the INIT reply's {@code max_readahead}); a larger window is set afterwards in the mount's backing device
 * ({@code /sys/class/bdi/MAJOR:MINOR/read_ahead_kb}), which only root may write. A larger window keeps more READs,
 * and so more chunk conversions, in flight at once: a converted f32 folder was read 1.5-2.1x as fast at 1024 KiB
 * (BENCHMARKS.md, "mmap through the mount"), though whole tools were not always faster ({@link #DEFAULT_KIB}). Files
 * opened with kernel passthrough read the blob's own device and do not depend on it.
 *
 * <p>Invariants: {@link #apply} runs once the kernel has processed the INIT reply (it stats the mount point first,
 * which waits for INIT), since that reply would otherwise lower the window again; files opened before it keep the
 * window they were opened with. It never fails the mount: a window that cannot be set leaves the kernel's, with one
 * log line.
 */
final class ReadAheadWindow {
    private static final Logger LOG = Logger.getLogger(ReadAheadWindow.class.getName());

    /**
     * {@code --read-ahead-kb}'s default: 0, the kernel's window. Measured on whole tools (BENCHMARKS.md "Read-ahead
     * window", stop 44), 1024 KiB made a first load of a converted folder faster from a cold page cache but slower from a
     * warm one (the reader's own CPU then competes with more conversions in flight), and bindfs alike.
     */
    static final int DEFAULT_KIB = 0;

    private ReadAheadWindow() {}

    /**
     * Sets the read-ahead window of the mount at {@code mountpoint} to {@code kib} KiB; 0 leaves the kernel's.
     * Returns whether the window is now {@code kib}.
     */
    static boolean apply(Path mountpoint, int kib) {
        if (kib <= 0) {
            return false;
        }
        Path knob;
        try {
            knob = knob(mountpoint);
            Files.writeString(knob, Integer.toString(kib), StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            LOG.info("read-ahead window of " + mountpoint + " left at the kernel's 128 KiB (setting " + kib
                    + " KiB needs root: " + e.getMessage() + "); converted files load more slowly (README, troubleshooting)");
            return false;
        }
        OptionalInt now = current(mountpoint);
        if (now.isEmpty() || now.getAsInt() != kib) {
            LOG.info("read-ahead window of " + mountpoint + ": asked for " + kib + " KiB, the kernel keeps "
                    + (now.isPresent() ? now.getAsInt() + " KiB" : "an unknown window"));
            return false;
        }
        LOG.fine("read-ahead window of " + mountpoint + ": " + kib + " KiB (" + knob + ")");
        return true;
    }

    /** The mount's read-ahead window in KiB, if its backing device's setting can be read. */
    static OptionalInt current(Path mountpoint) {
        try {
            return OptionalInt.of(Integer.parseInt(Files.readString(knob(mountpoint), StandardCharsets.US_ASCII).trim()));
        } catch (IOException | RuntimeException e) {
            return OptionalInt.empty();
        }
    }

    /**
     * {@code /sys/class/bdi/MAJOR:MINOR/read_ahead_kb} of the file system at {@code mountpoint}: FUSE names a mount's
     * backing device after its anonymous device number. Stat-ing the mount point waits for the kernel's INIT.
     */
    static Path knob(Path mountpoint) throws IOException {
        long dev = ((Number) Files.getAttribute(mountpoint, "unix:dev")).longValue();
        long major = ((dev >>> 8) & 0xfffL) | ((dev >>> 32) & 0xfffff000L);
        long minor = (dev & 0xffL) | ((dev >>> 12) & 0xffffff00L);
        return Path.of("/sys/class/bdi", major + ":" + minor, "read_ahead_kb");
    }
}
