package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --metrics} of a real mount and a real {@code modelfs nfs}, scraped by the real Prometheus server:
 * its HTTP API answers with the figures the test predicts from the reads it made (bytes of each kind of
 * file, failures by errno and model, models served and broken, open files, NFS calls), and
 * {@code modelfs status} prints them for a person.
 *
 * <p>The store is the fixture's {@code tinyllama} (a GGUF with a rebuilt Hugging Face folder),
 * {@code hf-llama:q8_0} (whose {@code model.safetensors} is dequantized), {@code hf-llama:f32} (whose
 * {@code gguf/model.safetensors} is its F32 tensors laid out under a safetensors header),
 * {@code missing-blob} and {@code truncated} (whose {@code model.gguf} the fixture expects to fail with
 * ENOENT and EIO), plus one unparsable manifest: 5 models served, 3 broken.
 */
class MetricsTest {
    @TempDir
    static Path work;
    static Path store;
    static CliMount mount;
    static CliNfs nfs;
    static PrometheusServer prometheus;
    static String nfsMetrics;

    private static final List<String> MANIFESTS = List.of("tinyllama/latest", "hf-llama/q8_0", "hf-llama/f32",
            "missing-blob/latest", "truncated/latest");

    @BeforeAll
    static void start() throws Exception {
        PrometheusServer.binary();
        CliNfs.requireClients();
        store = privateStore(work.resolve("store"));
        // --no-warmup: its reads through the mount would count; --no-kernel-passthrough: whole-blob files too are
        // served by modelfs, so that every kind of file has bytes to count (KernelPassthroughTest checks the other way)
        mount = CliMount.start(store, work.resolve("mnt"), "--metrics", "127.0.0.1:0", "--no-warmup", "--no-kernel-passthrough");
        nfs = CliNfs.start(store, work.resolve("nfs.log"), CliNfs.freePort(), "--metrics", "127.0.0.1:0");
        Matcher m = Pattern.compile("metrics at http://(\\S+)/metrics").matcher(nfs.log());
        assertTrue(m.find(), "modelfs nfs names its metrics address:\n" + nfs.log());
        nfsMetrics = m.group(1);
        prometheus = PrometheusServer.start(work.resolve("prometheus"), Map.of("mount", rootMetricsXattr(), "nfs", nfsMetrics));
    }

    @AfterAll
    static void stop() throws Exception {
        if (prometheus != null) {
            prometheus.close();
        }
        if (nfs != null) {
            nfs.close();
        }
        if (mount != null) {
            mount.close();
        }
    }

    /** The five manifests and an unparsable one, with every blob of the fixture (hard links where possible). */
    private static Path privateStore(Path dir) throws IOException, InterruptedException {
        Path src = Fixture.store();
        Files.createDirectories(dir.resolve("blobs"));
        try (var blobs = Files.list(src.resolve("blobs"))) {
            for (Path b : blobs.toList()) {
                Path t = dir.resolve("blobs").resolve(b.getFileName().toString());
                try {
                    Files.createLink(t, b);
                } catch (IOException | UnsupportedOperationException e) {
                    Files.copy(b, t);
                }
            }
        }
        Path library = Path.of("manifests", "registry.ollama.ai", "library");
        for (String m : MANIFESTS) {
            Path t = dir.resolve(library).resolve(m);
            Files.createDirectories(t.getParent());
            Files.copy(src.resolve(library).resolve(m), t);
        }
        Path bad = Files.createDirectories(dir.resolve(library).resolve("unparsable")).resolve("latest");
        Files.writeString(bad, "{not json");
        return dir;
    }

    /** The mount root's {@code user.modelfs.metrics} attribute, read with the JDK's own xattr support. */
    private static String rootMetricsXattr() throws IOException {
        UserDefinedFileAttributeView v = Files.getFileAttributeView(mount.mountpoint, UserDefinedFileAttributeView.class);
        ByteBuffer b = ByteBuffer.allocate(v.size("modelfs.metrics"));
        v.read("modelfs.metrics", b);
        String value = new String(b.array(), 0, b.position(), StandardCharsets.UTF_8);
        assertTrue(value.matches("127\\.0\\.0\\.1:\\d+"), value);
        assertTrue(mount.log().contains("metrics at http://" + value + "/metrics"), mount.log());
        return value;
    }

    private static long readAll(String path) throws IOException {
        return readAll(mount.mountpoint, path);
    }

    private static long readAll(Path mountpoint, String path) throws IOException {
        return Files.readAllBytes(mountpoint.resolve(path)).length;
    }

    private static String q(String metric, String labels) {
        return metric + "{" + labels + "}";
    }

    @Test
    void prometheusSeesWhatTheMountServedAndStatusPrintsIt() throws Exception {
        long passthrough = readAll("tinyllama/model.gguf") + readAll("tinyllama/ollama/mmproj.gguf");   // mmproj.gguf: translated (FORMATS.md §12.5)
        long converted = readAll("hf-llama:q8_0/model.safetensors");
        long reassembled = readAll("hf-llama:f32/gguf/model.safetensors");
        long synthesized = readAll("tinyllama/ollama/Modelfile") + readAll("tinyllama/config.json");
        assertThrows(NoSuchFileException.class, () -> readAll("missing-blob/model.gguf"));
        FileSystemException eio = assertThrows(FileSystemException.class, () -> readAll("truncated/model.gguf"));
        assertTrue(String.valueOf(eio.getReason()).contains("Input/output error"), eio.toString());

        Map<String, Long> byKind = Map.of("passthrough", passthrough, "converted", converted, "reassembled", reassembled,
                "synthesized", synthesized);
        for (var e : byKind.entrySet()) {
            double expected = e.getValue();
            assertTrue(expected > 0, e.toString());
            String bytes = q("modelfs_read_bytes_total", "job=\"mount\",kind=\"" + e.getKey() + "\"");
            assertEquals(expected, prometheus.await(bytes, expected), bytes + "\n" + mount.log());
            String reads = q("modelfs_read_seconds_count", "job=\"mount\",kind=\"" + e.getKey() + "\"");
            double n = prometheus.query(reads);
            assertTrue(n >= Math.ceilDiv(e.getValue(), 128 * 1024), reads + " = " + n + ": FUSE reads are at most 128 KiB");
            assertEquals(n, prometheus.query(q("modelfs_read_seconds_bucket", "job=\"mount\",kind=\"" + e.getKey() + "\",le=\"+Inf\"")));
        }

        assertEquals(1, prometheus.await(q("modelfs_errors_total", "job=\"mount\",errno=\"ENOENT\",model=\"missing-blob\""), 1));
        assertEquals(1, prometheus.await(q("modelfs_errors_total", "job=\"mount\",errno=\"EIO\",model=\"truncated\""), 1));
        assertEquals(2, prometheus.await("sum(modelfs_errors_total{job=\"mount\"})", 2));
        assertEquals(5, prometheus.await(q("modelfs_models", "job=\"mount\",state=\"served\""), 5));
        assertEquals(3, prometheus.await(q("modelfs_models", "job=\"mount\",state=\"broken\""), 3));

        double conversions = prometheus.await(q("modelfs_conversions_total", "job=\"mount\""), v -> v > 0);
        assertTrue(conversions > 0, "the dequantized file was converted: " + conversions);
        assertEquals(0, prometheus.await("modelfs_chunk_cache_misses_total{job=\"mount\"} - modelfs_conversions_total{job=\"mount\"}", 0),
                "every miss is one conversion");
        assertTrue(prometheus.query(q("modelfs_conversion_cpu_seconds_total", "job=\"mount\"")) > 0);
        double held = prometheus.query(q("modelfs_chunk_cache_bytes", "job=\"mount\""));
        assertTrue(held > 0 && held <= 512 << 20, "chunks held: " + held);

        try (InputStream open = Files.newInputStream(mount.mountpoint.resolve("tinyllama/ollama/template"))) {
            assertEquals(1, prometheus.await(q("modelfs_open_files", "job=\"mount\""), 1), "one file held open");
        }
        assertEquals(0, prometheus.await(q("modelfs_open_files", "job=\"mount\""), 0), "closed");

        Env.Run status = Env.run(60, CliMount.command("status", mount.mountpoint.toString()));
        assertEquals(0, status.exit(), status.output());
        String out = status.output();
        System.out.println(out);
        assertTrue(out.contains("metrics http://" + rootMetricsXattr() + "/metrics"), out);
        assertTrue(out.contains("\nmodels       5 served, 3 broken\n"), out);
        assertTrue(out.contains("\nopen files   0\n"), out);
        assertTrue(out.contains("\npassthrough  0 opens handed to the kernel"), out);
        for (var e : byKind.entrySet()) {
            assertTrue(Pattern.compile("(?m)^  " + e.getKey() + " +" + Pattern.quote(human(e.getValue())) + " ").matcher(out).find(),
                    e + " as " + human(e.getValue()) + ":\n" + out);
        }
        assertTrue(Pattern.compile("(?m)^errors +2: (EIO 1, ENOENT 1|ENOENT 1, EIO 1); by model: (missing-blob 1, truncated 1)$")
                .matcher(out).find(), out);
        assertTrue(Pattern.compile("(?m)^conversions +" + Math.round(conversions) + " chunks, ").matcher(out).find(), out);
        assertTrue(!out.contains("NFS calls"), out);
    }

    @Test
    void prometheusSeesTheNfsCallsAndBytesOfAClient() throws Exception {
        CliNfs.Out cat = CliNfs.run(60, "nfs-cat", nfs.url("tinyllama/model.gguf"));
        assertEquals(0, cat.exit(), cat.stderr());
        long bytes = cat.stdout().length;
        assertEquals(Files.size(mount.mountpoint.resolve("tinyllama/model.gguf")), bytes);
        String passthrough = q("modelfs_read_bytes_total", "job=\"nfs\",kind=\"passthrough\"");
        assertEquals(bytes, prometheus.await(passthrough, bytes), passthrough + "\n" + nfs.log());
        double reads = prometheus.await("sum(modelfs_read_seconds_count{job=\"nfs\"})", v -> v > 0);
        assertTrue(reads >= Math.ceilDiv(bytes, 1 << 20), "READs are at most 1 MiB: " + reads);
        assertEquals(reads, prometheus.await(q("modelfs_nfs_operations_total", "job=\"nfs\",procedure=\"READ\",client=\"127.0.0.1\""), reads),
                "every READ answered is one read");
        assertTrue(prometheus.query("sum(modelfs_nfs_operations_total{job=\"nfs\",procedure=\"LOOKUP\"})") >= 1,
                "the client looked the file up");

        CliNfs.Out missing = CliNfs.run(60, "nfs-cat", nfs.url("missing-blob/model.gguf"));
        assertNotEquals(0, missing.exit(), "a missing blob cannot be read over NFS either");
        double failed = prometheus.await(q("modelfs_errors_total", "job=\"nfs\",errno=\"ENOENT\",model=\"missing-blob\""), v -> v >= 1);
        assertTrue(failed >= 1, "the failed READ counts against its model\n" + nfs.log());
        assertEquals(reads + failed, prometheus.await(q("modelfs_nfs_operations_total",
                "job=\"nfs\",procedure=\"READ\",client=\"127.0.0.1\""), reads + failed), "READs = answered + failed");
        assertEquals(5, prometheus.await(q("modelfs_models", "job=\"nfs\",state=\"served\""), 5));

        long calls = Math.round(prometheus.query("sum(modelfs_nfs_operations_total{job=\"nfs\"})"));
        Env.Run status = Env.run(60, CliMount.command("status", nfsMetrics));
        assertEquals(0, status.exit(), status.output());
        String out = status.output();
        System.out.println(out);
        assertTrue(out.startsWith("modelfs NFS server (metrics http://" + nfsMetrics + "/metrics)"), out);
        String n = String.format(Locale.ROOT, "%,d", calls);
        assertTrue(Pattern.compile("(?m)^NFS calls +" + n + ": [A-Z]+ [0-9,]+.*; by client: 127\\.0\\.0\\.1 " + n + "$").matcher(out).find(),
                "the calls Prometheus counted (" + n + "), all from 127.0.0.1:\n" + out);
    }

    @Test
    void aDaemonMountServesTheMetricsItWasAskedForAndSaysWhere() throws Exception {
        Path mp = Files.createDirectories(work.resolve("daemon-mnt"));
        Env.Run started = Env.run(60, CliMount.command("mount", "--store", store.toString(), "--metrics", "127.0.0.1:0",
                "--daemon", "--log", work.resolve("daemon.log").toString(), mp.toString()));
        try {
            assertEquals(0, started.exit(), started.output());
            Matcher m = Pattern.compile("metrics at http://(127\\.0\\.0\\.1:\\d+)/metrics").matcher(started.output());
            assertTrue(m.find(), started.output());
            readAll(mp, "tinyllama/ollama/Modelfile");
            Env.Run status = Env.run(60, CliMount.command("status", mp.toString()));
            assertEquals(0, status.exit(), status.output());
            assertTrue(status.output().contains("(metrics http://" + m.group(1) + "/metrics)"), status.output());
            assertTrue(Pattern.compile("(?m)^  synthesized +\\S+ \\S+ +1 read, ").matcher(status.output()).find(), status.output());
        } finally {
            Env.Run stopped = Env.run(60, CliMount.command("unmount", mp.toString()));
            assertEquals(0, stopped.exit(), stopped.output());
        }
    }

    @Test
    void statusOfAFolderThatShowsNoMetricsSaysSo() throws Exception {
        Path plain = Files.createDirectories(work.resolve("plain"));
        Env.Run status = Env.run(60, CliMount.command("status", plain.toString()));
        assertEquals(2, status.exit(), status.output());
        assertTrue(status.output().contains("shows no metrics"), status.output());
    }

    /** Binary units with one decimal (README "Metrics"), computed here independently of modelfs. */
    private static String human(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        double v = bytes;
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
