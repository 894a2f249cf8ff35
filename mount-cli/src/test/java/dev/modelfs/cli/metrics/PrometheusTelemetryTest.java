package dev.modelfs.cli.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.cache.ChunkCache;
import dev.modelfs.cache.DiskChunkStore;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.telemetry.FileKind;
import dev.modelfs.serve.ServedTree;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Prometheus sink served over real HTTP by the client library's own server, read back as its text
 * format: what was reported is what a scraper sees.
 */
class PrometheusTelemetryTest {
    @TempDir
    Path store;

    private static List<MetricsText.Sample> scrape(PrometheusTelemetry t) throws IOException, InterruptedException {
        String url = "http://" + t.endpoint().orElseThrow() + "/metrics";
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        return MetricsText.parse(r.body());
    }

    private static double value(List<MetricsText.Sample> samples, String name, Map<String, String> labels) {
        return samples.stream().filter(s -> s.name().equals(name) && s.labels().entrySet().containsAll(labels.entrySet()))
                .mapToDouble(MetricsText.Sample::value).sum();
    }

    @Test
    void whatIsReportedIsWhatAScrapeShows() throws Exception {
        try (PrometheusTelemetry t = PrometheusTelemetry.serve(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), true);
             ServedTree served = ServedTree.open(new OllamaStore(store), List.of(), 3 << 20, 60_000, t)) {
            assertTrue(t.endpoint().orElseThrow().startsWith("127.0.0.1:"), t.endpoint().toString());
            t.watch(served, () -> 7);
            t.read(FileKind.PASSTHROUGH, 1000, 20_000);           // 20 µs
            t.read(FileKind.PASSTHROUGH, 24, 3_000_000);          // 3 ms
            t.read(FileKind.CONVERTED, 4096, 700_000);
            t.conversion(1_500_000_000L);
            t.conversion(500_000_000L);
            t.error("EIO", "tinyllama");
            t.error("EIO", "tinyllama");
            t.error("ENOENT", "-");
            InetAddress client = InetAddress.getByName("10.1.2.3");
            t.nfsCall(6, client);
            t.nfsCall(6, client);
            t.nfsCall(3, null);
            t.nfsCall(99, client);

            List<MetricsText.Sample> s = scrape(t);
            assertEquals(1024, value(s, "modelfs_read_bytes_total", Map.of("kind", "passthrough")));
            assertEquals(4096, value(s, "modelfs_read_bytes_total", Map.of("kind", "converted")));
            assertEquals(0, value(s, "modelfs_read_bytes_total", Map.of("kind", "synthesized")));
            assertEquals(2, value(s, "modelfs_read_seconds_count", Map.of("kind", "passthrough")));
            assertEquals(0.00302, value(s, "modelfs_read_seconds_sum", Map.of("kind", "passthrough")), 1e-12);
            assertEquals(1, value(s, "modelfs_read_seconds_bucket", Map.of("kind", "passthrough", "le", "2.5E-5")));
            assertEquals(1, value(s, "modelfs_read_seconds_bucket", Map.of("kind", "passthrough", "le", "0.0025")));
            assertEquals(2, value(s, "modelfs_read_seconds_bucket", Map.of("kind", "passthrough", "le", "0.005")));
            assertEquals(2, value(s, "modelfs_conversions_total", Map.of()));
            assertEquals(2.0, value(s, "modelfs_conversion_cpu_seconds_total", Map.of()), 1e-9);
            assertEquals(2, value(s, "modelfs_errors_total", Map.of("errno", "EIO", "model", "tinyllama")));
            assertEquals(1, value(s, "modelfs_errors_total", Map.of("errno", "ENOENT", "model", "-")));
            assertEquals(2, value(s, "modelfs_nfs_operations_total", Map.of("procedure", "READ", "client", "10.1.2.3")));
            assertEquals(1, value(s, "modelfs_nfs_operations_total", Map.of("procedure", "UNKNOWN", "client", "10.1.2.3")));
            assertEquals(1, value(s, "modelfs_nfs_operations_total", Map.of("procedure", "LOOKUP", "client", "unknown")));
            assertEquals(7, value(s, "modelfs_open_files", Map.of()));
            assertEquals(3 << 20, value(s, "modelfs_chunk_cache_capacity_bytes", Map.of()));
            assertEquals(0, value(s, "modelfs_models", Map.of("state", "served")));
            assertEquals(1, value(s, "modelfs_info", Map.of("front", "nfs")));
        }
    }

    @Test
    void theCacheDirectorysEventsAreScraped(@TempDir Path cacheDir) throws Exception {
        DiskChunkStore disk = new DiskChunkStore(cacheDir, 64 << 20);
        try (PrometheusTelemetry t = PrometheusTelemetry.serve(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), true);
             ServedTree served = ServedTree.open(new OllamaStore(store), List.of(), 3 << 20, 60_000, t, disk)) {
            t.watch(served, () -> 0);
            ChunkCache chunks = served.chunks();
            for (long k = 0; k < 3; k++) {                     // three misses on disk, converted and written
                chunks.acquire(new ChunkCache.Key(1, k), "metrics-" + k, 4096, m -> m.fill((byte) 7)).release();
            }
            assertTrue(disk.flush(10_000));
            Files.write(disk.fileOf("metrics-0"), new byte[10]);   // truncated: rejected when read
            MemorySegment dst = Arena.ofAuto().allocate(4096);
            assertTrue(disk.read("metrics-1", dst));
            assertFalse(disk.read("metrics-0", dst));
            List<MetricsText.Sample> s = scrape(t);
            assertEquals(1, value(s, "modelfs_cache_dir_chunks_total", Map.of("event", "hit")));
            assertEquals(4, value(s, "modelfs_cache_dir_chunks_total", Map.of("event", "miss")));
            assertEquals(3, value(s, "modelfs_cache_dir_chunks_total", Map.of("event", "written")));
            assertEquals(1, value(s, "modelfs_cache_dir_chunks_total", Map.of("event", "rejected")));
            assertEquals(0, value(s, "modelfs_cache_dir_chunks_total", Map.of("event", "skipped")));
            assertEquals(0, value(s, "modelfs_cache_dir_pending_chunks", Map.of()));
            assertEquals(0, value(s, "modelfs_converted_ahead_files_total", Map.of()), "not started: nothing converted ahead");
        }
    }

    @Test
    void manyClientsAndModelsShareOneOtherLabel() throws Exception {
        try (PrometheusTelemetry t = PrometheusTelemetry.serve(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), true)) {
            for (int i = 0; i < PrometheusTelemetry.MAX_CLIENTS + 10; i++) {
                t.nfsCall(1, InetAddress.getByAddress(new byte[] {10, 9, (byte) (i >> 8), (byte) i}));
            }
            for (int i = 0; i < PrometheusTelemetry.MAX_MODELS + 5; i++) {
                t.error("EIO", "model" + i);
            }
            List<MetricsText.Sample> s = scrape(t);
            long clients = s.stream().filter(x -> x.name().equals("modelfs_nfs_operations_total")).map(x -> x.label("client")).distinct().count();
            assertEquals(PrometheusTelemetry.MAX_CLIENTS + 1, clients, "bounded, plus the shared label");
            assertEquals(PrometheusTelemetry.MAX_CLIENTS + 10, value(s, "modelfs_nfs_operations_total", Map.of("procedure", "GETATTR")));
            assertEquals(5, value(s, "modelfs_errors_total", Map.of("model", PrometheusTelemetry.OTHER)));
        }
    }

    @Test
    void readsConversionsAndNfsCallsAllocateNothingOnceBound() throws Exception {
        try (PrometheusTelemetry t = PrometheusTelemetry.serve(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), true)) {
            InetAddress client = InetAddress.getByName("10.1.2.3");
            FileKind[] kinds = FileKind.values();
            assertAllocatesNothing("read", i -> t.read(kinds[i & 3], 131072, 50_000 + i));
            assertAllocatesNothing("conversion", i -> t.conversion(1000 + i));
            assertAllocatesNothing("nfsCall", i -> t.nfsCall(i % 22, client));
        }
    }

    /**
     * Requires {@code call} to reach a steady state that allocates nothing: some window of 10,000 calls
     * (after warm-up while the JIT compiles: at least 20,000,000 calls, and up to 60 s) allocates under 1 KiB. The
     * client library's histogram makes a capturing lambda per observation, which escape analysis removes once C2 has
     * compiled the caller; on a busy test JVM that took more than 2,000,000 calls once, and 20,000,000 calls (0.7 s of
     * C1-compiled code) were not enough once while a C++ build shared both CPUs (clean-clone CI runs): the bound is
     * time, since C2's compile queue is what waits.
     */
    private static void assertAllocatesNothing(String what, java.util.function.IntConsumer call) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().threadId();
        long allocated = Long.MAX_VALUE, calls = 0, deadline = System.nanoTime() + 60_000_000_000L;
        while (allocated >= 1024 && (calls < 20_000_000 || System.nanoTime() < deadline)) {
            long before = threads.getThreadAllocatedBytes(id);
            for (int i = 0; i < 10_000; i++) {
                call.accept(i);
            }
            allocated = threads.getThreadAllocatedBytes(id) - before;
            calls += 10_000;
        }
        assertTrue(allocated < 1024, what + ": " + allocated + " bytes allocated by 10,000 calls after " + calls);
    }

    @Test
    void aPortInUseIsAnErrorNamingTheAddress() throws Exception {
        try (PrometheusTelemetry first = PrometheusTelemetry.serve(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), false)) {
            InetSocketAddress taken = MetricsAddress.parse(first.endpoint().orElseThrow());
            IOException e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class, () -> PrometheusTelemetry.serve(taken, false));
            assertTrue(e.getMessage().contains(first.endpoint().orElseThrow()), e.getMessage());
        }
    }
}
