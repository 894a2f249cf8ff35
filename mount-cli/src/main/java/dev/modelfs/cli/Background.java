package dev.modelfs.cli;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * {@code --daemon}: re-runs this very program (same JVM, flags and class path) with other arguments in
 * a detached session, its output appended to a log file, and waits until it is ready.
 *
 * <p>Invariants: returns the child only once {@code ready} holds; a child that exits first, or is not
 * ready within 30 s (then it is killed), is an {@link IOException} naming the log.
 */
final class Background {
    private Background() {}

    /** The default log file of a background command: ~/.cache/modelfs/NAME.log. */
    static Path defaultLog(String name) {
        return Path.of(System.getProperty("user.home"), ".cache", "modelfs", name + ".log");
    }

    /**
     * The {@code java} of the running JVM: its runtime's {@code bin/java} (also in the Debian package's
     * jlinked runtime, whose process command is the jpackage launcher, which takes no JVM options).
     */
    static String javaCommand() {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        return Files.isExecutable(java) ? java.toString() : ProcessHandle.current().info().command().orElse("java");
    }

    static Process start(List<String> args, Path log, BooleanSupplier ready) throws IOException, InterruptedException {
        Files.createDirectories(log.toAbsolutePath().getParent());
        List<String> cmd = new ArrayList<>();
        if (new File("/usr/bin/setsid").canExecute()) {
            cmd.add("/usr/bin/setsid");
        }
        cmd.add(javaCommand());
        cmd.addAll(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments());
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Main.class.getName());
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (ready.getAsBoolean()) {
                return p;
            }
            if (!p.isAlive()) {
                throw new IOException("background " + args.getFirst() + " exited with " + p.exitValue() + "; see " + log);
            }
            Thread.sleep(100);
        }
        p.destroy();
        throw new IOException("background " + args.getFirst() + " did not come up within 30 s; see " + log);
    }
}
