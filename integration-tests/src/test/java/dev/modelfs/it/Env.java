package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Where the real tools are: the Python venv, the CLI jar, the JVM. Missing pieces fail loudly. */
final class Env {
    private Env() {}

    static String python() {
        return System.getProperty("modelfs.python", "python3");
    }

    static Path pythonDir() {
        return Path.of(System.getProperty("modelfs.pythonDir", "python")).toAbsolutePath();
    }

    static Path cliJar() {
        Path p = Path.of(System.getProperty("modelfs.cliJar", "../mount-cli/target/modelfs.jar")).toAbsolutePath().normalize();
        if (!Files.isRegularFile(p)) {
            fail("CLI jar not built: " + p + " (run the build through ./test)");
        }
        return p;
    }

    static String java() {
        return System.getProperty("modelfs.java", Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    static void requireFuse() {
        if (!Files.exists(Path.of("/dev/fuse"))) {
            fail("/dev/fuse is missing: the integration tests need FUSE (they never skip)");
        }
        try {
            Process p = new ProcessBuilder("fusermount", "-V").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                fail("fusermount hangs");
            }
        } catch (IOException | InterruptedException e) {
            fail("fusermount is not installed (Debian: apt-get install fuse libfuse2): " + e.getMessage());
        }
    }

    /** Result of a finished process. */
    record Run(int exit, String output) {}

    /** Runs a Python script from integration-tests/python with the venv interpreter. */
    static Run python(long timeoutSeconds, String script, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(python(), pythonDir().resolve(script).toString()));
        cmd.addAll(List.of(args));
        return run(timeoutSeconds, cmd);
    }

    static Run run(long timeoutSeconds, List<String> cmd) throws IOException, InterruptedException {
        return run(timeoutSeconds, cmd, java.util.Map.of());
    }

    /** {@link #run(long, List)} with these environment variables added. */
    static Run run(long timeoutSeconds, List<String> cmd, java.util.Map<String, String> env) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        pb.environment().put("PYTHONUNBUFFERED", "1");
        pb.environment().put("HF_HUB_OFFLINE", "1");
        pb.environment().put("TRANSFORMERS_OFFLINE", "1");
        Process p = pb.start();
        StringBuilder out = new StringBuilder();
        Thread pump = new Thread(() -> {
            try {
                out.append(new String(p.getInputStream().readAllBytes()));
            } catch (IOException e) {
                out.append("\n[output lost: ").append(e).append("]");
            }
        });
        pump.start();
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            pump.join(5000);
            fail("timed out after " + timeoutSeconds + " s: " + String.join(" ", cmd) + "\n" + out);
        }
        pump.join();
        return new Run(p.exitValue(), out.toString());
    }

    /** A process's resident memory in KiB ({@code VmRSS}), 0 when it has exited. */
    static long rssKib(long pid) throws IOException {
        try {
            for (String l : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/" + pid + "/status"))) {
                if (l.startsWith("VmRSS:")) {
                    return Long.parseLong(l.replaceAll("\\D", ""));
                }
            }
        } catch (java.nio.file.NoSuchFileException gone) {
            return 0;
        }
        return 0;
    }

    /**
     * The threads of JVM {@code pid} that run modelfs code (from {@code jcmd Thread.print}), each with its first frames:
     * what a request that did not answer was waiting on. A line saying why when the dump cannot be taken.
     */
    static String modelfsThreads(long pid) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        try {
            Run r = run(30, List.of(jcmd.toString(), Long.toString(pid), "Thread.print"));
            StringBuilder out = new StringBuilder();
            for (String thread : r.output().split("\n\n")) {
                if (thread.contains("dev.modelfs.")) {
                    String[] lines = thread.split("\n");
                    out.append(String.join("\n", Arrays.asList(lines).subList(0, Math.min(lines.length, 14)))).append("\n\n");
                }
            }
            return out.isEmpty() ? "(no modelfs threads in the dump of " + pid + ", exit " + r.exit() + ")" : out.toString();
        } catch (IOException | InterruptedException | AssertionError e) {
            return "(no thread dump of " + pid + ": " + e + ")";
        }
    }
}
