package dev.modelfs.cli;

import dev.modelfs.cli.metrics.MetricsAddress;
import dev.modelfs.cli.metrics.MetricsText;
import dev.modelfs.cli.metrics.MountMetrics;
import dev.modelfs.cli.metrics.StatusReport;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code modelfs status MOUNTPOINT | ADDR:PORT}: the figures of a running mount (found through its root's
 * {@code user.modelfs.metrics} attribute) or NFS server (its {@code --metrics} address), for a person.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Print what a running mount or NFS server serves: models, reads by kind of file, chunk cache, "
                + "conversions, errors, NFS calls. Reads the process's --metrics endpoint: a mount point names its own.")
final class StatusCommand implements Callable<Integer> {
    @Parameters(paramLabel = "MOUNTPOINT|ADDR:PORT", description = "a mount made with --metrics, or the --metrics address of `modelfs nfs`")
    String target;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Path p = Path.of(target);
        String endpoint;
        String title;
        if (Files.isDirectory(p)) {
            Path mp = p.toAbsolutePath().normalize();
            endpoint = MountMetrics.endpoint(mp).orElseThrow(() -> new IOException(
                    mp + " shows no metrics: it is not a modelfs mount, or was mounted without --metrics ADDR:PORT"));
            title = "modelfs mount at " + mp;
        } else {
            try {
                endpoint = MetricsAddress.reachable(MetricsAddress.parse(target));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        target + " is neither a mount point nor ADDR:PORT (" + e.getMessage() + ")");
            }
            title = "modelfs";
        }
        String url = "http://" + endpoint + "/metrics";
        StatusReport report = new StatusReport(MetricsText.parse(fetch(url)));
        if (title.equals("modelfs")) {
            title = report.isNfs() ? "modelfs NFS server" : "modelfs mount";
        }
        System.out.print(report.render(title + " (metrics " + url + ")"));
        return 0;
    }

    private static String fetch(String url) throws IOException, InterruptedException {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest req = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .header("Accept", "text/plain; version=0.0.4").GET().build();
        HttpResponse<String> r;
        try {
            r = client.send(req, HttpResponse.BodyHandlers.ofString());
        } catch (java.net.ConnectException e) {
            throw new IOException("nothing answers at " + url + " (is the mount or NFS server still running?)", e);
        } catch (IOException e) {
            throw new IOException("cannot read " + url + ": " + (e.getMessage() == null ? e.toString() : e.getMessage()), e);
        }
        if (r.statusCode() != 200) {
            throw new IOException(url + " answered HTTP " + r.statusCode());
        }
        return r.body();
    }
}
