package dev.modelfs.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.logging.Logger;

/**
 * Where {@code mount} and {@code nfs} keep converted chunks when no {@code --cache-dir} is given: {@code $MODELFS_CACHE_DIR},
 * else {@code $XDG_CACHE_HOME/modelfs/converted}, else {@code $HOME/.cache/modelfs/converted} (the XDG base directory
 * rule; relative values are ignored, as the rule says). The systemd units name {@code /var/cache/modelfs} instead.
 *
 * <p>Invariants: {@link #usable} returns an absolute directory that exists and is writable by this process, or null
 * after one log line saying why and how to choose another; it never throws.
 */
final class DefaultCacheDir {
    private static final Logger LOG = Logger.getLogger(DefaultCacheDir.class.getName());

    private DefaultCacheDir() {
    }

    /** The default directory under the environment {@code env}, or null when none can be named (no absolute HOME). */
    static Path of(Map<String, String> env) {
        String own = env.get("MODELFS_CACHE_DIR");
        if (own != null && Path.of(own).isAbsolute()) {
            return Path.of(own);
        }
        String xdg = env.get("XDG_CACHE_HOME");
        if (xdg != null && Path.of(xdg).isAbsolute()) {
            return Path.of(xdg, "modelfs", "converted");
        }
        String home = env.get("HOME");
        return home != null && Path.of(home).isAbsolute() ? Path.of(home, ".cache", "modelfs", "converted") : null;
    }

    /** {@link #of} made (with its parents) and checked writable, or null with one log line. */
    static Path usable(Map<String, String> env, long bound) {
        Path dir = of(env);
        if (dir == null) {
            LOG.warning("converted chunks are kept in memory only: no cache directory (HOME unset; --cache-dir DIR names one)");
            return null;
        }
        try {
            Files.createDirectories(dir);
            if (!Files.isWritable(dir)) {
                throw new IOException("not writable");
            }
        } catch (IOException | SecurityException e) {
            LOG.warning("converted chunks are kept in memory only: cannot use the cache directory " + dir + " (" + e
                    + "; --cache-dir DIR names another, --no-cache-dir says so)");
            return null;
        }
        LOG.info("converted chunks are kept in " + dir + ", at most " + (bound >> 20) + " MiB (--cache-dir DIR, --no-cache-dir)");
        return dir;
    }
}
