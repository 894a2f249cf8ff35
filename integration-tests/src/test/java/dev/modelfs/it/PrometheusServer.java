package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.testing.Poll;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.DoublePredicate;

/**
 * The real Prometheus server (Debian {@code prometheus}), started by the test with a generated config
 * that scrapes the given {@code 127.0.0.1} targets every second, its database in a temporary folder and
 * its own web listener on a free loopback port; queried through its HTTP API ({@code /api/v1/query}).
 * {@link #close()} kills it.
 */
final class PrometheusServer implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Process process;
    private final Path log;
    private final String api;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private PrometheusServer(Process process, Path log, String api) {
        this.process = process;
        this.log = log;
        this.api = api;
    }

    /** Fails loudly when the Prometheus server is not installed (./test installs it as root). */
    static Path binary() {
        for (String dir : (System.getenv().getOrDefault("PATH", "/usr/bin") + ":/usr/bin:/usr/sbin").split(":")) {
            Path p = Path.of(dir, "prometheus");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return fail("the Prometheus server is not installed (Debian: apt-get install prometheus; ./test installs it as root)");
    }

    /** Starts Prometheus in {@code work} scraping each {@code job -> HOST:PORT} target; returns once it is ready. */
    static PrometheusServer start(Path work, Map<String, String> targets) throws IOException, InterruptedException {
        Path bin = binary();
        Files.createDirectories(work.resolve("data"));
        StringBuilder cfg = new StringBuilder("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n");
        targets.forEach((job, target) -> cfg.append("  - job_name: ").append(job)
                .append("\n    static_configs:\n      - targets: ['").append(target).append("']\n"));
        Path config = Files.writeString(work.resolve("prometheus.yml"), cfg);
        int port = CliNfs.freePort();
        Path log = work.resolve("prometheus.log");
        Process p = new ProcessBuilder(bin.toString(), "--config.file=" + config, "--storage.tsdb.path=" + work.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port, "--storage.tsdb.retention.time=1h", "--log.level=warn")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        PrometheusServer s = new PrometheusServer(p, log, "http://127.0.0.1:" + port);
        if (!Poll.within(Duration.ofSeconds(60), () -> !p.isAlive() || s.ready()) || !p.isAlive()) {
            s.close();
            fail("Prometheus did not become ready within 60 s:\n" + Files.readString(log));
        }
        return s;
    }

    private boolean ready() {
        try {
            return http.send(HttpRequest.newBuilder(URI.create(api + "/-/ready")).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /**
     * The value of PromQL {@code query}, which must give one series (a scalar-like instant vector), or NaN
     * while it gives none (not scraped yet).
     */
    double query(String query) throws IOException, InterruptedException {
        String url = api + "/api/v1/query?query=" + URLEncoder.encode(query, StandardCharsets.UTF_8);
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), query + ": " + r.body());
        JsonNode result = JSON.readTree(r.body()).path("data").path("result");
        if (result.isEmpty()) {
            return Double.NaN;
        }
        assertEquals(1, result.size(), query + " gave several series: " + result);
        return Double.parseDouble(result.get(0).path("value").get(1).asText());
    }

    /**
     * Polls {@code query} (scrapes come every second) until its value satisfies {@code want} or 30 s passed;
     * returns the last value, so that the caller's assertion shows what Prometheus saw.
     */
    double await(String query, DoublePredicate want) throws IOException, InterruptedException {
        double[] v = {Double.NaN};
        Poll.within(Duration.ofSeconds(30), () -> want.test(v[0] = query(query)));
        return v[0];
    }

    /** {@link #await} until the value equals {@code expected}. */
    double await(String query, double expected) throws IOException, InterruptedException {
        return await(query, v -> v == expected);
    }

    String log() throws IOException {
        return Files.readString(log);
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
