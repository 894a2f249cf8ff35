package dev.modelfs.cli;

import dev.modelfs.cli.metrics.MetricsAddress;
import dev.modelfs.cli.metrics.PrometheusTelemetry;
import dev.modelfs.telemetry.Telemetry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** {@code --metrics ADDR:PORT}, shared by {@code mount} and {@code nfs}: the Prometheus endpoint of the process. */
final class MetricsOption {
    @Option(names = "--metrics", paramLabel = "ADDR:PORT",
            description = "serve Prometheus metrics at http://ADDR:PORT/metrics (port 0: a free one); `modelfs status` reads them")
    String address;

    @CommandLine.Spec(CommandLine.Spec.Target.MIXEE)
    CommandLine.Model.CommandSpec spec;

    /** The address asked for, or null; a malformed one is a usage error. */
    InetSocketAddress parse() {
        if (address == null) {
            return null;
        }
        try {
            return MetricsAddress.parse(address);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--metrics: " + e.getMessage());
        }
    }

    /** Starts serving the metrics of a mount or ({@code nfs}) an NFS server when asked; null otherwise. */
    PrometheusTelemetry start(boolean nfs) throws IOException {
        InetSocketAddress at = parse();
        return at == null ? null : PrometheusTelemetry.serve(at, nfs);
    }

    /** The option as given, for the command line of a {@code --daemon} child. */
    List<String> args() {
        return address == null ? List.of() : List.of("--metrics", address);
    }

    static Telemetry orNone(PrometheusTelemetry t) {
        return t == null ? Telemetry.NONE : t;
    }

    /** {@code "; metrics at http://HOST:PORT/metrics"}, or "" without metrics. */
    static String describe(PrometheusTelemetry t) {
        return t == null ? "" : t.endpoint().map(e -> "; metrics at http://" + e + "/metrics").orElse("");
    }
}
