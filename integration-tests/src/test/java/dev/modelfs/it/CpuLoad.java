package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Every CPU kept busy beside a test: Debian's {@code stress-ng --cpu N} (installed by {@code ./test} as root,
 * scripts/lib.sh {@code ensure_stress_ng}). Bounded twice: stress-ng's own {@code --timeout} ends it even if
 * this JVM dies, and {@link #close()} stops it and its workers (SIGTERM, then SIGKILL by pid).
 */
final class CpuLoad implements AutoCloseable {
    private final Process process;
    private final Path log;

    private CpuLoad(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /** Starts {@code workers} CPU hogs for at most {@code atMost}; fails loudly when stress-ng is missing or does not start. */
    static CpuLoad start(int workers, Duration atMost, Path log) throws IOException, InterruptedException {
        boolean found = false;
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            found |= Files.isExecutable(Path.of(dir, "stress-ng"));
        }
        if (!found) {
            fail("stress-ng is not installed (Debian: apt-get install stress-ng; ./test installs it as root)");
        }
        Process p = new ProcessBuilder(List.of("stress-ng", "--cpu", Integer.toString(workers), "--timeout", atMost.toSeconds() + "s"))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        CpuLoad load = new CpuLoad(p, log);
        dev.modelfs.testing.Poll.until("stress-ng's " + workers + " CPU workers running", Duration.ofSeconds(30),
                () -> {
                    if (!p.isAlive()) {
                        throw new IOException("stress-ng exited with " + p.exitValue() + ":\n" + Files.readString(log));
                    }
                    return p.descendants().count() >= workers;
                });
        return load;
    }

    /** Whether the load still runs (its workers too): the test asserts it lasted as long as the test. */
    boolean running() {
        return process.isAlive() && process.descendants().anyMatch(ProcessHandle::isAlive);
    }

    @Override
    public void close() throws IOException, InterruptedException {
        List<ProcessHandle> workers = process.descendants().toList();
        process.destroy();                                       // SIGTERM: stress-ng stops its workers and exits
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
        for (ProcessHandle w : workers) {
            if (w.isAlive()) {
                w.destroyForcibly();
            }
        }
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "stress-ng still running:\n" + Files.readString(log));
    }
}
