package dev.modelfs.fuse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * Reads {@code /proc/self/mountinfo} and drives {@code fusermount}: is a path a mount point, is that
 * mount stale (its server died: "Transport endpoint is not connected"), and unmount it.
 */
public final class MountTable {
    private static final Logger LOG = Logger.getLogger(MountTable.class.getName());

    private MountTable() {}

    /** The file system type modelfs mounts have in {@code /proc/self/mountinfo} ({@code subtype=modelfs}). */
    public static final String MODELFS_TYPE = "fuse.modelfs";

    /** Whether {@code mountpoint} (absolute, normalized) is currently a mount point. */
    public static boolean isMounted(Path mountpoint) {
        return fsType(mountpoint).isPresent();
    }

    /**
     * The type of the file system mounted at {@code mountpoint} (the topmost one, as the path resolves), e.g.
     * {@value #MODELFS_TYPE} or {@code tmpfs}; empty when it is not a mount point.
     */
    public static Optional<String> fsType(Path mountpoint) {
        String want = mountpoint.toAbsolutePath().normalize().toString();
        String type = null;
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
                String[] f = line.split(" ");
                int dash = line.indexOf(" - ");
                if (f.length > 4 && dash > 0 && unescape(f[4]).equals(want)) {
                    type = line.substring(dash + 3).split(" ")[0];     // later lines are mounted on top
                }
            }
        } catch (IOException e) {
            LOG.fine("cannot read mountinfo: " + e.getMessage());
        }
        return Optional.ofNullable(type);
    }

    private static String unescape(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 3 < s.length()) {
                sb.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    /** Whether a mount at {@code mountpoint} no longer answers (its FUSE server is gone). */
    public static boolean isStale(Path mountpoint) {
        try {
            Files.readAttributes(mountpoint, java.nio.file.attribute.BasicFileAttributes.class);
            return false;
        } catch (IOException e) {
            String m = String.valueOf(e.getMessage());
            return m.contains("not connected") || m.contains("Transport endpoint");
        }
    }

    /** {@code fusermount -u [-z]}; true on success. */
    public static boolean fusermount(Path mountpoint, boolean lazy) {
        List<String> cmd = lazy
                ? List.of("fusermount", "-u", "-z", mountpoint.toString())
                : List.of("fusermount", "-u", mountpoint.toString());
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return false;
            }
            if (p.exitValue() != 0 && !out.isEmpty()) {
                LOG.fine(String.join(" ", cmd) + ": " + out);
            }
            return p.exitValue() == 0;
        } catch (IOException e) {
            LOG.warning("cannot run fusermount: " + e.getMessage());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Unmounts politely: a normal {@code fusermount -u}, retried while the mount is busy for up to
     * {@code patienceMillis}, then a lazy one. Returns true when the path is no longer a mount point.
     */
    public static boolean unmount(Path mountpoint, long patienceMillis) {
        long deadline = System.nanoTime() + patienceMillis * 1_000_000L;
        while (isMounted(mountpoint)) {
            if (fusermount(mountpoint, false)) {
                return true;
            }
            if (System.nanoTime() > deadline) {
                LOG.warning(mountpoint + " is busy; unmounting lazily");
                return fusermount(mountpoint, true) || !isMounted(mountpoint);
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return fusermount(mountpoint, true);
            }
        }
        return true;
    }
}
