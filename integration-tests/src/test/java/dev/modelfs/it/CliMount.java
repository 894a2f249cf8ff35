package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.fuse.MountTable;
import dev.modelfs.testing.Poll;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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

    CliMount(Path store, Path mountpoint, Process process, Path log) {
        this.store = store;
        this.mountpoint = mountpoint;
        this.process = process;
        this.log = log;
    }

    /** The commands the launcher ({@code ./modelfs}) starts with the Vector API module. */
    private static final java.util.Set<String> CONVERTING_COMMANDS = java.util.Set.of("mount", "demo", "nfs");

    /** {@code modelfs show --json [--tensors] MODEL} over {@code store}, run as a user runs it; its JSON. */
    static JsonNode showJson(Path store, String model, boolean tensors) throws Exception {
        List<String> args = new ArrayList<>(List.of("show", "--store", store.toString(), "--json"));
        if (tensors) {
            args.add("--tensors");
        }
        args.add(model);
        Env.Run r = Env.run(120, command(args.toArray(String[]::new)));
        assertEquals(0, r.exit(), r.output());
        String o = r.output();
        return new ObjectMapper().readTree(o.substring(o.indexOf('{') == 0 ? 0 : o.indexOf("\n{") + 1));
    }

    static List<String> command(String... args) {
        List<String> cmd = new ArrayList<>(List.of(Env.java(), "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow", "-Xms32m", "-XX:+UseSerialGC", "-XX:-UseProfiledLoopPredicate"));
        if (args.length > 0 && CONVERTING_COMMANDS.contains(args[0])) {
            cmd.addAll(List.of("--add-modules", "jdk.incubator.vector")); // as the launcher: the Vector API kernels
        }
        cmd.addAll(List.of("-jar", Env.cliJar().toString()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /**
     * How long {@code modelfs mount} or {@code modelfs nfs} may take to say it serves (its readiness, polled): 7-8 s
     * over the 44-model test store on a quiet 2-CPU machine, the warm-up's JIT passes included, and 30 s or more on
     * one shared with other builds. Only a start that hangs or fails waits this long.
     */
    static final Duration READY_BOUND = Duration.ofSeconds(120);

    static CliMount start(Path store, Path mountpoint, String... extra) throws IOException, InterruptedException {
        return startWith(List.of(), store, mountpoint, extra);
    }

    /**
     * Like {@link #start}, run by another {@code modelfs} command, e.g. {@code /usr/bin/modelfs} of the
     * Debian package ({@code modelfs} empty: the built jar).
     */
    static CliMount startWith(List<String> modelfs, Path store, Path mountpoint, String... extra) throws IOException, InterruptedException {
        return startWith(READY_BOUND, modelfs, store, mountpoint, extra);
    }

    /** Like {@link #start}, failing unless the mount serves within {@code ready} (a test that loads the machine on purpose). */
    static CliMount start(Duration ready, Path store, Path mountpoint, String... extra) throws IOException, InterruptedException {
        return startWith(ready, List.of(), store, mountpoint, extra);
    }

    /**
     * Like {@link #start}, returning as soon as the mount serves, while its warm-up may still run behind it
     * ({@link #start} also waits for the warm-up's end, so that what a test measures, RSS or metrics, is what it was
     * when the mount appeared only after its warm-up).
     */
    static CliMount startServing(Path store, Path mountpoint, String... extra) throws IOException, InterruptedException {
        return startWith(READY_BOUND, List.of(), store, mountpoint, false, extra);
    }

    private static CliMount startWith(Duration bound, List<String> modelfs, Path store, Path mountpoint, String... extra)
            throws IOException, InterruptedException {
        return startWith(bound, modelfs, store, mountpoint, true, extra);
    }

    /** {@code warmed}: ready also needs the warm-up's end ({@link #warmedUp}). */
    private static CliMount startWith(Duration bound, List<String> modelfs, Path store, Path mountpoint, boolean warmed,
                                      String... extra) throws IOException, InterruptedException {
        return startWith(bound, modelfs, store, mountpoint, warmed, null, extra);
    }

    /**
     * Like {@link #start}, as a user starts it: with the cache directory of its defaults ({@code --no-cache-dir} is not
     * added) and these environment variables added (null values removed).
     */
    static CliMount startAsAUser(Map<String, String> env, Path store, Path mountpoint, String... extra)
            throws IOException, InterruptedException {
        return startWith(READY_BOUND, List.of(), store, mountpoint, true, env, extra);
    }

    /** {@code env}: null for {@link #memoryOnlyUnlessNamed} and this process's environment, else as {@link #startAsAUser}. */
    private static CliMount startWith(Duration bound, List<String> modelfs, Path store, Path mountpoint, boolean warmed,
                                      Map<String, String> env, String... extra) throws IOException, InterruptedException {
        Env.requireFuse();
        try {
            Files.createDirectories(mountpoint);
        } catch (java.nio.file.FileAlreadyExistsException e) {
            // a stale mount point answers stat with ENOTCONN: modelfs itself must clear it
        }
        Path log = mountpoint.resolveSibling(mountpoint.getFileName() + ".log");
        List<String> args = new ArrayList<>(List.of("mount", "--store", store.toString()));
        args.addAll(env == null ? memoryOnlyUnlessNamed(extra) : List.of(extra));
        args.add(mountpoint.toString());
        // ready = the command says it serves (a stale mount left at the path is in mountinfo too)
        Ready ready = () -> Files.readString(log).contains("modelfs: serving") && MountTable.isMounted(mountpoint)
                && (!warmed || warmedUp(Files.readString(log), extra));
        Process p = launchCommand(modelfs.isEmpty() ? command(args.toArray(String[]::new)) : concat(modelfs, args), log, "mount", ready, bound,
                env == null ? Map.of() : env);
        return new CliMount(store, mountpoint, p, log);
    }

    /**
     * {@code extra} with {@code --no-cache-dir} added unless it names a cache directory itself ({@code --cache-dir},
     * {@code --no-cache-dir}): the cache directory is on by default (docs/SEMANTICS.md), and a test reads what one mount
     * converts, never chunks an earlier test left in a shared directory; and with a cache directory named,
     * {@code --no-convert-ahead}, so that what a test counts is what its readers made. {@code ConvertOnceTest} tests the
     * defaults ({@link #startAsAUser}).
     */
    static List<String> memoryOnlyUnlessNamed(String... extra) {
        List<String> out = new ArrayList<>(List.of(extra));
        if (!out.contains("--cache-dir") && !out.contains("--no-cache-dir")) {
            out.addFirst("--no-cache-dir");
        } else if (out.contains("--cache-dir") && !out.contains("--no-convert-ahead")) {
            out.addFirst("--no-convert-ahead");
        }
        return out;
    }

    /**
     * Whether a command with these arguments has no warm-up still to come: {@code --no-warmup}, a front end whose warm-up
     * is done (its log says {@code warm-up done}, docs/DESIGN.md §2.8), or a command that does not serve.
     */
    static boolean warmedUp(String log, String... args) {
        return List.of(args).contains("--no-warmup") || log.contains("warm-up done");
    }

    /** When a launched command is ready. */
    @FunctionalInterface
    interface Ready {
        boolean test() throws IOException;
    }

    /** Starts {@code modelfs ARGS} with its output in {@code log}; fails unless it is ready within {@link #READY_BOUND}. */
    static Process launch(List<String> args, Path log, String what, Ready ready) throws IOException, InterruptedException {
        return launchCommand(command(args.toArray(String[]::new)), log, what, ready);
    }

    /** Starts the command line {@code cmd} with its output in {@code log}; fails unless it is ready within {@link #READY_BOUND}. */
    static Process launchCommand(List<String> cmd, Path log, String what, Ready ready) throws IOException, InterruptedException {
        return launchCommand(cmd, log, what, ready, READY_BOUND);
    }

    /** Starts the command line {@code cmd} with its output in {@code log}; fails unless it is ready within {@code bound}. */
    static Process launchCommand(List<String> cmd, Path log, String what, Ready ready, Duration bound) throws IOException, InterruptedException {
        return launchCommand(cmd, log, what, ready, bound, Map.of());
    }

    /** Like {@link #launchCommand(List, Path, String, Ready, Duration)} with {@code env} added (null values removed). */
    static Process launchCommand(List<String> cmd, Path log, String what, Ready ready, Duration bound, Map<String, String> env)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        env.forEach((k, v) -> {
            if (v == null) {
                pb.environment().remove(k);
            } else {
                pb.environment().put(k, v);
            }
        });
        Process p = pb.start();
        try {
            Poll.until("modelfs " + what + " ready", bound, () -> {
                if (!p.isAlive()) {
                    fail("modelfs " + what + " exited with " + p.exitValue() + ":\n" + Files.readString(log));
                }
                return ready.test();
            }, () -> readQuietly(log));
        } catch (AssertionError | InterruptedException e) {
            p.destroyForcibly();
            throw e;
        }
        return p;
    }

    /** The log's text, or a note that it cannot be read (for failure messages). */
    static String readQuietly(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    String log() throws IOException {
        return Files.readString(log);
    }

    /**
     * Runs a Python checker from integration-tests/python on this mount ({@code script mountpoint args...})
     * and requires exit 0 and its summary line {@code N passed, 0 failed}; failures show the checker's
     * output and the mount's log.
     */
    Env.Run requireChecker(long timeoutSeconds, String script, String... args) throws IOException, InterruptedException {
        List<String> all = new ArrayList<>(List.of(mountpoint.toString()));
        all.addAll(List.of(args));
        Env.Run r = Env.python(timeoutSeconds, script, all.toArray(String[]::new));
        System.out.println(r.output());
        assertEquals(0, r.exit(), script + " failed:\n" + r.output() + "\nmount log:\n" + log());
        assertTrue(r.output().lines().anyMatch(l -> l.matches("\\d+ passed, 0 failed")), r.output());
        return r;
    }

    /** SIGTERM, then require exit 0 and an unmounted mount point. */
    @Override
    public void close() throws IOException, InterruptedException {
        if (terminate(process, log, () -> MountTable.fusermount(mountpoint, true))) {
            assertTrue(!MountTable.isMounted(mountpoint), "still mounted after SIGTERM");
        }
    }

    /** SIGTERM, then require exit 0 within 30 s ({@code onTimeout} cleans up first); false if it had already exited. */
    static boolean terminate(Process process, Path log, Runnable onTimeout) throws IOException, InterruptedException {
        if (!process.isAlive()) {
            return false;
        }
        process.destroy();   // SIGTERM
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            onTimeout.run();
            fail("modelfs did not exit within 30 s of SIGTERM:\n" + Files.readString(log));
        }
        assertEquals(0, process.exitValue(), "exit code after SIGTERM:\n" + Files.readString(log));
        return true;
    }
}
