package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.modelfs.fuse.MountTable;
import dev.modelfs.testing.Poll;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The fault-injecting lower filesystem of the stalled-store tests: {@code integration-tests/faultfs/faultfs.c}
 * (libfuse2), built here with gcc and mounted over a store directory, so that modelfs serves a store whose disk
 * stalls, fails reads with EIO, returns short reads or disconnects on demand (SEMANTICS.md "When the store's disk
 * fails"), or a cache directory whose writes fail with {@code EDQUOT}, {@code EROFS} or {@code ENOSPC} ("When the cache
 * directory's disk fails"). {@link #set} writes the control file; {@link #awaitStalled} waits for operations stuck on a stall.
 *
 * <p>Invariants: {@link #close} clears every fault before it unmounts, so nothing stays stuck on a stall.
 */
final class FaultFs implements AutoCloseable {
    final Path mountpoint;
    private final Path control;

    private FaultFs(Path mountpoint, Path control) {
        this.mountpoint = mountpoint;
        this.control = control;
    }

    /** Builds faultfs into {@code work} and mounts {@code source} at {@code work/lower}, read-only (a store). */
    static FaultFs mount(Path source, Path work) throws IOException, InterruptedException {
        return mount(source, work, false);
    }

    /**
     * Builds faultfs into {@code work} and mounts {@code source} at {@code work/lower}; {@code writable}: writes pass
     * through (a cache directory whose writes fail as {@code errno PATTERN N} lines say).
     */
    static FaultFs mount(Path source, Path work, boolean writable) throws IOException, InterruptedException {
        Env.requireFuse();
        Path exe = work.resolve("faultfs");
        Path src = Path.of(System.getProperty("user.dir")).resolve("faultfs/faultfs.c");
        Env.Run cc = Env.run(120, List.of("sh", "-c", "gcc -O2 -Wall -o '" + exe + "' '" + src + "' $(pkg-config --cflags --libs fuse)"));
        assertEquals(0, cc.exit(), "gcc and libfuse-dev (scripts/lib.sh ensure_faultfs_build) build faultfs:\n" + cc.output());
        Path control = work.resolve("faults");
        Files.writeString(control, "");
        Path mp = Files.createDirectories(work.resolve("lower"));
        Env.Run m = Env.run(30, List.of(exe.toString(), source.toString(), mp.toString(), control.toString(),
                "-o", (writable ? "rw" : "ro") + ",attr_timeout=0,entry_timeout=0,negative_timeout=0"));
        assertEquals(0, m.exit(), "faultfs mounts:\n" + m.output());
        return new FaultFs(mp, control);
    }

    /** Replaces the faults with {@code lines} (faultfs.c's syntax: {@code stall [PATTERN]}, {@code eio P A B}, ...). */
    void set(String... lines) throws IOException {
        Path tmp = control.resolveSibling("faults.new");
        Files.writeString(tmp, lines.length == 0 ? "" : String.join("\n", lines) + "\n");
        Files.move(tmp, control, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    /** Operations waiting on a stall now. */
    int stalled() throws IOException {
        Path f = control.resolveSibling("faults.stalled");
        return Files.exists(f) ? Integer.parseInt(Files.readString(f).trim()) : 0;
    }

    /** Waits up to {@code seconds} until at least {@code n} operations wait on a stall; fails otherwise. */
    void awaitStalled(int n, long seconds) throws IOException, InterruptedException {
        Poll.until(n + " operations stalled on the lower filesystem", Duration.ofSeconds(seconds), () -> stalled() >= n);
    }

    @Override
    public void close() throws IOException {
        set();
        if (!MountTable.fusermount(mountpoint, false)) {
            MountTable.fusermount(mountpoint, true);
        }
    }
}
