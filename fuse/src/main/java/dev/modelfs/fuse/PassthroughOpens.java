package dev.modelfs.fuse;

import dev.modelfs.telemetry.Telemetry;
import java.util.HashMap;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.logging.Logger;

/**
 * Which opens the kernel's FUSE passthrough takes: the blobs registered with the kernel as backing files, how many
 * open files use each, and the mode of every path with open files.
 *
 * <p>The kernel ties passthrough to the inode, and libfuse's high-level API keeps one inode per path while any file
 * of it is open. Every open of an inode must then use the same backing file, or none (the kernel fails the open
 * otherwise, with EIO). Hence, per path with open files: opened without passthrough, later opens are served here
 * too; opened with blob A, later opens of A pass through as well, and an open that would now read another blob
 * (the tag was re-pulled while a reader holds the old one open) is refused with {@link #BUSY} until those files
 * are closed (after waiting up to {@link #RELEASE_WAIT_NANOS} for them).
 *
 * <p>Invariants: a blob has a registration exactly while an open file holds it ({@link #admit} / {@link #closed}
 * pair up), so a blob removed from the store is not kept on disk by the kernel once its readers are gone; a blob
 * has at most one registration at a time; once a registration fails (no {@code CAP_SYS_ADMIN}, an overlayfs store, a
 * kernel that turned passthrough down), no further blob is registered and every later file is served here. Only
 * paths with open files have an entry. Nothing is passed through until {@link #enable} (after INIT accepted it).
 */
final class PassthroughOpens {
    private static final Logger LOG = Logger.getLogger(PassthroughOpens.class.getName());
    /** {@link #admit}'s answer when the path's open files hold another blob. */
    static final int BUSY = -1;
    /**
     * How long an open that would be {@link #BUSY} waits for the other files to be released: the kernel sends a
     * file's RELEASE in the background, so a reader that closed the old version just before has usually not been
     * released here yet. The wait holds one FUSE worker, another one processes the RELEASE; one open waits at a
     * time, so that opens of a busy path in a loop cannot hold every worker.
     */
    static final long RELEASE_WAIT_NANOS = 100_000_000L;

    /** The kernel's registry: {@code register} answers an id (> 0) or a negated errno; so does {@code unregister}. */
    interface Device {
        int register(int blobFd);

        int unregister(int id);
    }

    private record Registration(int id, int users) {}

    /** A path with open files: the blob they pass through to (null: served here), how many, whether a refusal was logged. */
    private record PathMode(Object blob, int open, boolean refusalLogged) {}

    private final Map<Object, Registration> registrations = new HashMap<>();
    private final Map<String, PathMode> paths = new HashMap<>();
    private final Telemetry telemetry;
    private final long releaseWaitNanos;
    private Device device;
    private boolean failed;
    /** Whether an open waits in {@link #admit} for RELEASEs now. */
    private boolean waiting;

    PassthroughOpens(Telemetry telemetry) {
        this(telemetry, RELEASE_WAIT_NANOS);
    }

    /** With another wait for RELEASEs than {@link #RELEASE_WAIT_NANOS} (tests). */
    PassthroughOpens(Telemetry telemetry, long releaseWaitNanos) {
        this.telemetry = telemetry;
        this.releaseWaitNanos = releaseWaitNanos;
    }

    /** Whether an open waits for RELEASEs now. */
    synchronized boolean waiting() {
        return waiting;
    }

    /** From now on blobs are registered with {@code device}. */
    synchronized void enable(Device device) {
        this.device = device;
    }

    /**
     * An open of {@code path}, whose bytes are all of blob file {@code blob} (null when they are not one whole blob; a
     * key that tells blob files apart, not only blobs: a blob deleted and written again must not be read through the
     * registration of its old, maybe truncated, file), whose open descriptor {@code fd} gives: the registration id
     * its reply names (> 0), 0 when this process serves it, or {@link #BUSY}. Every answer but BUSY must be followed
     * by {@link #closed} when the file is released. An open that prefers to be served here ({@code served}: an
     * {@code O_DIRECT} open, which passthrough would send past the page cache to the disk) is, unless files of its
     * path already pass through to its blob file, which the kernel then requires of it too.
     */
    synchronized int admit(String path, Object blob, boolean served, IntSupplier fd) {
        PathMode mode = paths.get(path);
        if (mode != null && mode.blob() != null && !mode.blob().equals(blob) && !waiting) {
            waiting = true;         // one open waits at a time: the others cannot hold more workers
            try {
                long deadline = System.nanoTime() + releaseWaitNanos;
                while (mode != null && mode.blob() != null && !mode.blob().equals(blob) && System.nanoTime() < deadline) {
                    // a reader that has just closed the old version: its RELEASE comes after its close() returned
                    wait(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                    mode = paths.get(path);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                waiting = false;
            }
        }
        if (mode != null && mode.blob() != null && !mode.blob().equals(blob)) {
            if (!mode.refusalLogged()) {
                LOG.warning(path + ": its bytes changed while " + mode.open() + " reader(s) still hold the old ones open with"
                        + " kernel passthrough, which allows one blob per open path: new opens fail with EBUSY until they close");
                paths.put(path, new PathMode(mode.blob(), mode.open(), true));
            }
            return BUSY;
        }
        Object through = mode != null ? mode.blob() : served ? null : blob;   // a path open without passthrough stays so
        int id = through == null ? 0 : register(through, fd);
        paths.put(path, new PathMode(id > 0 ? through : null, (mode == null ? 0 : mode.open()) + 1, false));
        return id;
    }

    /** The file of {@code path} that {@link #admit} answered {@code id} (not BUSY) is released. */
    synchronized void closed(String path, int id) {
        notifyAll();                                            // an open waiting for this path's files to go
        PathMode mode = paths.get(path);
        if (mode != null) {
            if (mode.open() > 1) {
                paths.put(path, new PathMode(mode.blob(), mode.open() - 1, mode.refusalLogged()));
            } else {
                paths.remove(path);
            }
        }
        if (id > 0 && mode != null && mode.blob() != null) {
            unregister(mode.blob());
        }
    }

    private int register(Object blob, IntSupplier fd) {
        if (device == null) {
            return 0;
        }
        Registration r = registrations.get(blob);
        if (r == null) {
            if (failed) {
                return 0;
            }
            int id = device.register(fd.getAsInt());
            if (id <= 0) {
                failed = true;
                LOG.warning("kernel passthrough is off from now on: registering a blob as a backing file failed (errno "
                        + -id + (id == -1 ? ", EPERM: it needs CAP_SYS_ADMIN" : id == -40 ? ", ELOOP: the store is on a stacked file system" : "")
                        + "); modelfs serves whole-blob files itself");
                return 0;
            }
            r = new Registration(id, 0);
        }
        registrations.put(blob, new Registration(r.id(), r.users() + 1));
        telemetry.kernelPassthroughOpen();
        return r.id();
    }

    private void unregister(Object blob) {
        Registration r = registrations.get(blob);
        if (r == null) {
            return;
        }
        if (r.users() > 1) {
            registrations.put(blob, new Registration(r.id(), r.users() - 1));
            return;
        }
        registrations.remove(blob);
        int res = device.unregister(r.id());
        if (res < 0) {
            LOG.fine("dropping backing file " + r.id() + ": errno " + -res);
        }
    }

    /** Blobs registered now. */
    synchronized int registered() {
        return registrations.size();
    }

    /** Paths with open files now. */
    synchronized int openPaths() {
        return paths.size();
    }
}
