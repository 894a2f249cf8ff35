package dev.modelfs.cli.metrics;

import dev.modelfs.cache.ChunkCache;
import dev.modelfs.cache.DiskChunkStore;
import dev.modelfs.nfs.NfsProcedures;
import dev.modelfs.telemetry.FileKind;
import dev.modelfs.telemetry.Telemetry;
import dev.modelfs.serve.ServedTree;
import dev.modelfs.tree.StoreTree;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;
import java.util.function.ToLongFunction;

/**
 * The {@link Telemetry} of a running mount or NFS server as Prometheus metrics, served in the text
 * format at {@code http://ADDR:PORT/metrics} (README "Metrics" lists every name).
 *
 * <p>Invariants: {@link #read}, {@link #conversion} and {@link #nfsCall} allocate nothing once a label
 * combination exists: the data points of every file kind and NFS procedure are bound when this object is
 * made, those of a client when its first call arrives; at most {@value #MAX_CLIENTS} clients and
 * {@value #MAX_MODELS} models get labels of their own (later ones count as {@value #OTHER}), so a hostile
 * client or store cannot grow the metrics without bound. Everything else (cache, open files, models) is
 * read when scraped. {@link #close()} stops the HTTP server.
 */
public final class PrometheusTelemetry implements Telemetry, AutoCloseable {
    /** Upper bounds of the read latency buckets, in seconds: 10 µs to 10 s. */
    static final double[] LATENCY_BOUNDS = {1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05,
            0.1, 0.25, 0.5, 1, 2.5, 5, 10};
    static final int MAX_CLIENTS = 256;
    static final int MAX_MODELS = 1000;
    static final String OTHER = "(other)";

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final CounterDataPoint[] bytesByKind = new CounterDataPoint[FileKind.values().length];
    private final DistributionDataPoint[] latencyByKind = new DistributionDataPoint[FileKind.values().length];
    private final Counter conversions;
    private final Counter conversionCpu;
    private final Counter errors;
    private final Set<String> errorModels = ConcurrentHashMap.newKeySet();
    private final Counter nfsCalls;
    /** FUSE opens handed to the kernel's passthrough (a mount only). */
    private final Counter passthroughOpens;
    /** FUSE requests that came through io_uring (a mount only). */
    private final Counter ringRequests;
    /** By client address; beyond {@value #MAX_CLIENTS}, under the key {@value #OTHER}; no address: {@value #UNKNOWN}. */
    private final ConcurrentHashMap<Object, CounterDataPoint[]> nfsByClient = new ConcurrentHashMap<>();
    private static final String UNKNOWN = "unknown";
    private HTTPServer server;
    private String endpoint;

    /** The metrics of one process; {@code nfs}: it serves NFS (the NFS calls metric exists). */
    PrometheusTelemetry(boolean nfs) {
        Gauge.builder().name("modelfs_info").help("1, labelled with what this process serves: front=mount or front=nfs")
                .labelNames("front").register(registry).labelValues(nfs ? "nfs" : "mount").set(1);
        Counter bytes = Counter.builder().name("modelfs_read_bytes_total")
                .help("Bytes served to readers, by kind of file (passthrough, reassembled, converted, synthesized)")
                .labelNames("kind").withoutExemplars().register(registry);
        Histogram latency = Histogram.builder().name("modelfs_read_seconds")
                .help("Reads answered and the time modelfs took to answer each, by kind of file")
                .labelNames("kind").classicOnly().classicUpperBounds(LATENCY_BOUNDS).withoutExemplars().register(registry);
        for (FileKind k : FileKind.values()) {
            bytesByKind[k.ordinal()] = bytes.labelValues(k.label());
            latencyByKind[k.ordinal()] = latency.labelValues(k.label());
        }
        conversions = Counter.builder().name("modelfs_conversions_total")
                .help("Chunks of converted bytes computed (dequantized, cast or re-packed)").withoutExemplars().register(registry);
        conversionCpu = Counter.builder().name("modelfs_conversion_cpu_seconds_total")
                .help("CPU time spent computing converted chunks").withoutExemplars().register(registry);
        errors = Counter.builder().name("modelfs_errors_total")
                .help("Failed opens, reads and listings, by errno and by model (- for none)")
                .labelNames("errno", "model").withoutExemplars().register(registry);
        passthroughOpens = nfs ? null : Counter.builder().name("modelfs_kernel_passthrough_opens_total")
                .help("Opens of whole-blob files handed to the kernel's FUSE passthrough: their reads go from the blob to the"
                        + " reader without reaching modelfs, so they are in no modelfs_read_* figure")
                .withoutExemplars().register(registry);
        ringRequests = nfs ? null : Counter.builder().name("modelfs_fuse_io_uring_requests_total")
                .help("FUSE requests that came through io_uring instead of /dev/fuse (a mount with --io-uring)")
                .withoutExemplars().register(registry);
        if (nfs) {
            nfsCalls = Counter.builder().name("modelfs_nfs_operations_total")
                    .help("NFSv3 calls admitted, by procedure and client address")
                    .labelNames("procedure", "client").withoutExemplars().register(registry);
        } else {
            nfsCalls = null;
        }
    }

    /** Starts serving the metrics of a mount ({@code nfs} false) or an NFS server at {@code at}. */
    public static PrometheusTelemetry serve(InetSocketAddress at, boolean nfs) throws IOException {
        PrometheusTelemetry t = new PrometheusTelemetry(nfs);
        try {
            t.server = HTTPServer.builder().inetAddress(at.getAddress()).port(at.getPort()).registry(t.registry).buildAndStart();
        } catch (IOException e) {
            throw new IOException("cannot serve metrics on " + MetricsAddress.reachable(at) + ": " + e.getMessage(), e);
        }
        t.endpoint = MetricsAddress.reachable(new InetSocketAddress(at.getAddress(), t.server.getPort()));
        return t;
    }

    /** Also reports, at each scrape, the chunk cache and models of {@code served} and the files open now. */
    public void watch(ServedTree served, IntSupplier openFiles) {
        ChunkCache chunks = served.chunks();
        cacheCounter("modelfs_chunk_cache_hits_total", "Chunk cache lookups that found the chunk", chunks, ChunkCache.Stats::hits);
        cacheCounter("modelfs_chunk_cache_misses_total", "Chunk cache lookups that had to compute the chunk", chunks,
                ChunkCache.Stats::misses);
        cacheCounter("modelfs_chunk_cache_evictions_total", "Chunks evicted from the cache to stay within its size", chunks,
                ChunkCache.Stats::evictions);
        GaugeWithCallback.builder().name("modelfs_chunk_cache_bytes").help("Native memory held by cached chunks")
                .callback(cb -> cb.call(chunks.stats().bytes())).register(registry);
        GaugeWithCallback.builder().name("modelfs_chunk_cache_capacity_bytes").help("The chunk cache's bound (--cache-size)")
                .callback(cb -> cb.call(chunks.stats().capacityBytes())).register(registry);
        GaugeWithCallback.builder().name("modelfs_open_files").help("Files open now (NFS: recently read files kept open)")
                .callback(cb -> cb.call(openFiles.getAsInt())).register(registry);
        DiskChunkStore disk = chunks.disk();
        if (disk != null) {
            CounterWithCallback.builder().name("modelfs_cache_dir_chunks_total")
                    .help("Chunks of --cache-dir by event: hit (read from it), miss, written, backfilled (written from the backlog"
                            + " after a full write queue; also counted as written), skipped (never written: the backlog full, or a stopping process out of time), rejected (invalid, deleted)")
                    .labelNames("event")
                    .callback(cb -> {
                        cb.call(disk.hits(), "hit");
                        cb.call(disk.misses(), "miss");
                        cb.call(disk.writes(), "written");
                        cb.call(disk.backfilled(), "backfilled");
                        cb.call(disk.skipped(), "skipped");
                        cb.call(disk.rejected(), "rejected");
                    }).register(registry);
            GaugeWithCallback.builder().name("modelfs_cache_dir_pending_chunks")
                    .help("Chunks waiting to be written to --cache-dir: queued, being written, or in the backlog")
                    .callback(cb -> cb.call(disk.pending())).register(registry);
            CounterWithCallback.builder().name("modelfs_converted_ahead_files_total")
                    .help("Files converted ahead of readers into --cache-dir and kept whole (--no-convert-ahead: none)")
                    .callback(cb -> cb.call(served.convertedAhead())).register(registry);
        }
        StoreTree tree = served.tree();
        GaugeWithCallback.builder().name("modelfs_models")
                .help("Models served, and broken ones (unreadable manifest, or a blob missing or of another size)")
                .labelNames("state")
                .callback(cb -> {
                    StoreTree.ModelCounts c = tree.modelCounts();
                    cb.call(c.served(), "served");
                    cb.call(c.broken(), "broken");
                }).register(registry);
    }

    private void cacheCounter(String name, String help, ChunkCache chunks, ToLongFunction<ChunkCache.Stats> value) {
        CounterWithCallback.builder().name(name).help(help)
                .callback(cb -> cb.call(value.applyAsLong(chunks.stats()))).register(registry);
    }

    /** {@code HOST:PORT} where the metrics are served (reachable from this machine). */
    @Override
    public Optional<String> endpoint() {
        return Optional.ofNullable(endpoint);
    }

    PrometheusRegistry registry() {
        return registry;
    }

    @Override
    public void read(FileKind kind, long bytes, long nanos) {
        bytesByKind[kind.ordinal()].inc(bytes);
        latencyByKind[kind.ordinal()].observe(nanos * 1e-9);
    }

    @Override
    public void conversion(long cpuNanos) {
        conversions.inc();
        conversionCpu.inc(cpuNanos * 1e-9);
    }

    @Override
    public void fuseRingRequest() {
        if (ringRequests != null) {
            ringRequests.inc();
        }
    }

    @Override
    public void kernelPassthroughOpen() {
        if (passthroughOpens != null) {
            passthroughOpens.inc();
        }
    }

    @Override
    public void error(String errno, String model) {
        String m = errorModels.contains(model) || (errorModels.size() < MAX_MODELS && errorModels.add(model)) ? model : OTHER;
        errors.labelValues(errno, m).inc();
    }

    @Override
    public void nfsCall(int procedure, InetAddress client) {
        if (nfsCalls == null) {
            return;
        }
        Object key = client == null ? UNKNOWN : client;
        CounterDataPoint[] byProc = nfsByClient.get(key);
        if (byProc == null) {
            if (nfsByClient.size() >= MAX_CLIENTS) {
                key = OTHER;
            }
            byProc = nfsByClient.computeIfAbsent(key, k -> bind(k instanceof InetAddress a ? a.getHostAddress() : (String) k));
        }
        byProc[procedure >= 0 && procedure < NfsProcedures.count() ? procedure : NfsProcedures.count()].inc();
    }

    /** The data points of every procedure (and, last, of unknown ones) for one client label. */
    private CounterDataPoint[] bind(String client) {
        CounterDataPoint[] points = new CounterDataPoint[NfsProcedures.count() + 1];
        for (int p = 0; p < points.length; p++) {
            points[p] = nfsCalls.labelValues(NfsProcedures.name(p), client);
        }
        return points;
    }

    @Override
    public void close() {
        if (server != null) {
            server.close();
        }
    }
}
