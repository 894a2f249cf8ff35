package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.modelfs.fuse.MountTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real mount made by the real {@code modelfs mount} command in its own JVM, as a user runs it.
 * {@link #close()} sends SIGTERM and requires a clean exit and a cleared mount point.
 */
final class CliMount implements AutoCloseable {
    final Path store;
    final Path mountpoint;
    final Process process;
    final Path log;

    private CliMount(Path store, Path mountpoint, Process process, Path log) {
        this.store = store;
        this.mountpoint = mountpoint;
        this.process = process;
        this.log = log;
    }

    static List<String> command(String... args) {
        List<String> cmd = new ArrayList<>(List.of(Env.java(), "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow", "-Xms32m", "-jar", Env.cliJar().toString()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    static CliMount start(Path store, Path mountpoint, String... extra) throws IOException, InterruptedException {
        Env.requireFuse();
        try {
            Files.createDirectories(mountpoint);
        } catch (java.nio.file.FileAlreadyExistsException e) {
            // a stale mount point answers stat with ENOTCONN: modelfs itself must clear it
        }
        Path log = mountpoint.resolveSibling(mountpoint.getFileName() + ".log");
        List<String> args = new ArrayList<>(List.of("mount", "--store", store.toString()));
        args.addAll(List.of(extra));
        args.add(mountpoint.toString());
        Process p = new ProcessBuilder(command(args.toArray(String[]::new))).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        // ready = the command says it serves (a stale mount left at the path is in mountinfo too)
        while (!(Files.readString(log).contains("modelfs: serving") && MountTable.isMounted(mountpoint))) {
            if (!p.isAlive()) {
                fail("modelfs mount exited with " + p.exitValue() + ":\n" + Files.readString(log));
            }
            if (System.nanoTime() > deadline) {
                p.destroyForcibly();
                fail("mount did not appear within 30 s:\n" + Files.readString(log));
            }
            Thread.sleep(50);
        }
        return new CliMount(store, mountpoint, p, log);
    }

    String log() throws IOException {
        return Files.readString(log);
    }

    /** SIGTERM, then require exit 0 and an unmounted mount point. */
    @Override
    public void close() throws IOException, InterruptedException {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();   // SIGTERM
        boolean exited = process.waitFor(30, TimeUnit.SECONDS);
        if (!exited) {
            process.destroyForcibly();
            MountTable.fusermount(mountpoint, true);
            fail("modelfs did not exit within 30 s of SIGTERM:\n" + log());
        }
        assertEquals(0, process.exitValue(), "exit code after SIGTERM:\n" + log());
        assertTrue(!MountTable.isMounted(mountpoint), "still mounted after SIGTERM");
    }
}
