package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code modelfs nfs} server in its own JVM, as a user runs it, on a free port, and the libnfs
 * command-line clients ({@code nfs-ls}, {@code nfs-cat}, {@code nfs-cp}) pointed at it.
 * {@link #close()} sends SIGTERM and requires a clean exit.
 */
final class CliNfs implements AutoCloseable {
    final int port;
    final Process process;
    final Path log;

    private CliNfs(int port, Process process, Path log) {
        this.port = port;
        this.process = process;
        this.log = log;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static CliNfs start(Path store, Path log, int port, String... extra) throws IOException, InterruptedException {
        return start(CliMount.READY_BOUND, store, log, port, extra);
    }

    /** Like {@link #start(Path, Path, int, String...)}, failing unless the server says it serves within {@code ready}. */
    static CliNfs start(Duration ready, Path store, Path log, int port, String... extra) throws IOException, InterruptedException {
        return start(ready, true, store, log, port, extra);
    }

    /**
     * Like {@link #start(Path, Path, int, String...)}, returning as soon as the server says it serves, while its warm-up
     * may still run behind it (the other starts also wait for the warm-up's end: {@link CliMount#warmedUp}).
     */
    static CliNfs startServing(Path store, Path log, int port, String... extra) throws IOException, InterruptedException {
        return start(CliMount.READY_BOUND, false, store, log, port, extra);
    }

    private static CliNfs start(Duration ready, boolean warmed, Path store, Path log, int port, String... extra)
            throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("nfs", "--store", store.toString(), "--port", Integer.toString(port)));
        args.addAll(CliMount.memoryOnlyUnlessNamed(extra));
        Process p = CliMount.launchCommand(CliMount.command(args.toArray(String[]::new)), log, "nfs",
                () -> Files.readString(log).contains("modelfs: serving NFS") && (!warmed || CliMount.warmedUp(Files.readString(log), extra)),
                ready);
        return new CliNfs(port, p, log);
    }

    /** A server started by the caller's own command line (e.g. inside a cgroup), serving on {@code port}, its output in {@code log}. */
    static CliNfs launched(int port, Process process, Path log) {
        return new CliNfs(port, process, log);
    }

    /** The libnfs URL of {@code path} (relative to the export root) over NFSv3 on this server's port. */
    String url(String path) {
        return url(path, port);
    }

    static String url(String path, int port) {
        StringBuilder sb = new StringBuilder("nfs://127.0.0.1/");
        for (byte b : path.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~/:+".indexOf(c) >= 0) {
                sb.append(c);
            } else {
                sb.append('%').append(String.format("%02X", b & 0xff));
            }
        }
        return sb + "?version=3&nfsport=" + port + "&mountport=" + port;
    }

    /** Fails loudly when libnfs's tools are missing (./test installs libnfs-utils). */
    static void requireClients() {
        for (String tool : List.of("nfs-ls", "nfs-cat", "nfs-cp")) {
            boolean found = false;
            for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
                found |= Files.isExecutable(Path.of(dir, tool));
            }
            if (!found) {
                fail(tool + " is not installed (Debian: apt-get install libnfs-utils; ./test installs it as root)");
            }
        }
    }

    /** Runs a libnfs tool; returns its exit code and stdout bytes (stderr kept apart). */
    record Out(int exit, byte[] stdout, String stderr) {}

    static Out run(long timeoutSeconds, String... cmd) throws IOException, InterruptedException {
        Path err = Files.createTempFile("nfs-tool", ".err");
        try {
            Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
            p.getOutputStream().close();
            byte[][] out = new byte[1][];
            Thread pump = new Thread(() -> {
                try {
                    out[0] = p.getInputStream().readAllBytes();
                } catch (IOException e) {
                    out[0] = new byte[0];
                }
            });
            pump.start();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail("timed out after " + timeoutSeconds + " s: " + String.join(" ", cmd));
            }
            pump.join();
            return new Out(p.exitValue(), out[0], Files.readString(err));
        } finally {
            Files.deleteIfExists(err);
        }
    }

    String log() throws IOException {
        return Files.readString(log);
    }

    @Override
    public void close() throws IOException, InterruptedException {
        CliMount.terminate(process, log, () -> { });
    }
}
