package dev.modelfs.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code modelfs} command. Exit codes: 0 success, 1 usage error, 2 runtime error (one line on
 * stderr saying what went wrong).
 */
@Command(name = "modelfs", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Mount an Ollama model store as ordinary files (GGUF, safetensors, dequantized variants).",
        subcommands = {MountCommand.class, NfsCommand.class, UnmountCommand.class, LsCommand.class, ShowCommand.class, DemoCommand.class, VerifyCommand.class, StatusCommand.class, AotTrainCommand.class,
                CommandLine.HelpCommand.class})
public final class Main implements Runnable {
    public static final int USAGE = 1;
    public static final int FAILURE = 2;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command");
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the command line and returns its exit code (used by tests without exiting the JVM). */
    public static int run(String... args) {
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
            System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tF %1$tT %4$s %5$s%6$s%n");
        }
        CommandLine cl = new CommandLine(new Main());
        cl.setParameterExceptionHandler((ex, a) -> {
            ex.getCommandLine().getErr().println("modelfs: " + ex.getMessage());
            ex.getCommandLine().usage(ex.getCommandLine().getErr());
            return ex.getCommandLine().getCommand() instanceof VerifyCommand ? FAILURE : USAGE;   // verify's 1 means "broken"
        });
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            String msg = e.getMessage() == null ? e.toString() : e.getMessage();
            cmd.getErr().println("modelfs: " + msg.lines().findFirst().orElse(msg));
            if (Boolean.getBoolean("modelfs.trace")) {
                e.printStackTrace(cmd.getErr());
            }
            return FAILURE;
        });
        cl.setErr(new PrintWriter(System.err, true));
        return cl.execute(args);
    }

    /** Version from the build. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() throws IOException {
            Properties p = new Properties();
            try (InputStream in = Main.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            }
            return new String[] {"modelfs " + p.getProperty("version", "unknown"), "Java " + Runtime.version()};
        }
    }
}
