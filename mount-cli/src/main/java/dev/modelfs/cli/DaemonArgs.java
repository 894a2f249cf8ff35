package dev.modelfs.cli;

import dev.modelfs.store.OllamaStore;
import java.util.ArrayList;
import java.util.List;

/**
 * The arguments every {@code --daemon} child gets, whatever its front end: the command, the store, the chunk cache
 * and refresh period, and the conversion and metrics options as given. The command adds its own after these.
 */
final class DaemonArgs {
    private DaemonArgs() {}

    /** {@code COMMAND --store ROOT --cache-size N --refresh-ms N}, as a list the caller may extend. */
    static List<String> common(String command, OllamaStore store, long cacheSize, long refreshMillis) {
        return new ArrayList<>(List.of(command, "--store", store.root().toString(),
                "--cache-size", Long.toString(cacheSize), "--refresh-ms", Long.toString(refreshMillis)));
    }

    /** The conversion options, then the metrics option, as the parent was given them. */
    static List<String> options(ConversionOptions conversion, MetricsOption metrics) {
        List<String> out = new ArrayList<>(conversion.args());
        out.addAll(metrics.args());
        return out;
    }
}
