package dev.modelfs.cli.metrics;

import dev.modelfs.telemetry.FileKind;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * The figures of a running mount or NFS server (its Prometheus samples) for a person: one screen, human
 * units ({@code modelfs status}, README "Metrics").
 *
 * <p>Invariants: bytes are shown in binary units with one decimal ({@code 1.5 MiB}; under 1 KiB in bytes),
 * counts with thousands separators, times in µs, ms or s; every figure comes from the samples given, a
 * metric that is absent counts as 0 (the NFS line appears only for an NFS server).
 */
public final class StatusReport {
    private final List<MetricsText.Sample> samples;

    public StatusReport(List<MetricsText.Sample> samples) {
        this.samples = samples;
    }

    /** Whether the figures are an NFS server's ({@code modelfs_info{front="nfs"}}). */
    public boolean isNfs() {
        return sum("modelfs_info", s -> s.label("front").equals("nfs")) > 0;
    }

    /** The report, headed by {@code title}. */
    public String render(String title) {
        List<String> out = new ArrayList<>();
        out.add(title);
        out.add(row("models", fmt("%s served, %s broken", count(sum("modelfs_models", s -> s.label("state").equals("served"))),
                count(sum("modelfs_models", s -> s.label("state").equals("broken"))))));
        out.add(row("open files", count(sum("modelfs_open_files", s -> true))));
        if (!isNfs()) {
            double through = sum("modelfs_kernel_passthrough_opens_total", s -> true);
            out.add(row("passthrough", fmt("%s %s handed to the kernel (whole-blob files: their reads never reach modelfs)",
                    count(through), through == 1 ? "open" : "opens")));
        }
        double reads = sum("modelfs_read_seconds_count", s -> true);
        out.add(row("reads", fmt("%s, %s served%s", count(reads), bytes(sum("modelfs_read_bytes_total", s -> true)),
                latency(s -> true))));
        for (FileKind k : FileKind.values()) {
            Predicate<MetricsText.Sample> of = s -> s.label("kind").equals(k.label());
            double n = sum("modelfs_read_seconds_count", of);
            out.add(fmt("  %-13s %10s %9s %s%s", k.label(), bytes(sum("modelfs_read_bytes_total", of)), count(n),
                    n == 1 ? "read" : "reads", latency(of)));
        }
        double hits = sum("modelfs_chunk_cache_hits_total", s -> true);
        double misses = sum("modelfs_chunk_cache_misses_total", s -> true);
        out.add(row("chunk cache", fmt("%s of %s held; %s hits, %s misses%s, %s evictions",
                bytes(sum("modelfs_chunk_cache_bytes", s -> true)), bytes(sum("modelfs_chunk_cache_capacity_bytes", s -> true)),
                count(hits), count(misses), hits + misses > 0 ? fmt(" (%.1f%% hits)", 100 * hits / (hits + misses)) : "",
                count(sum("modelfs_chunk_cache_evictions_total", s -> true)))));
        out.add(row("conversions", fmt("%s chunks, %s CPU", count(sum("modelfs_conversions_total", s -> true)),
                seconds(sum("modelfs_conversion_cpu_seconds_total", s -> true)))));
        double errors = sum("modelfs_errors_total", s -> true);
        out.add(row("errors", errors == 0 ? "0" : fmt("%s: %s; by model: %s", count(errors), top("modelfs_errors_total", "errno"),
                top("modelfs_errors_total", "model"))));
        if (isNfs()) {
            double calls = sum("modelfs_nfs_operations_total", s -> true);
            out.add(row("NFS calls", calls == 0 ? "0" : fmt("%s: %s; by client: %s", count(calls),
                    top("modelfs_nfs_operations_total", "procedure"), top("modelfs_nfs_operations_total", "client"))));
        }
        return String.join("\n", out) + "\n";
    }

    private static String row(String what, String figures) {
        return fmt("%-12s %s", what, figures);
    }

    private double sum(String name, Predicate<MetricsText.Sample> which) {
        double total = 0;
        for (MetricsText.Sample s : samples) {
            if (s.name().equals(name) && which.test(s)) {
                total += s.value();
            }
        }
        return total;
    }

    /** {@code ", mean X, 99% within Y"} of the read latency histogram's samples that {@code which} keeps; "" without reads. */
    private String latency(Predicate<MetricsText.Sample> which) {
        double n = sum("modelfs_read_seconds_count", which);
        if (n == 0) {
            return "";
        }
        TreeMap<Double, Double> cumulative = new TreeMap<>();
        for (MetricsText.Sample s : samples) {
            if (s.name().equals("modelfs_read_seconds_bucket") && which.test(s)) {
                double le = s.label("le").equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(s.label("le"));
                cumulative.merge(le, s.value(), Double::sum);
            }
        }
        String p99 = cumulative.entrySet().stream().filter(e -> e.getValue() >= 0.99 * n).findFirst()
                .map(e -> e.getKey().isInfinite() ? "99% over " + seconds(cumulative.lowerKey(e.getKey()))
                        : "99% within " + seconds(e.getKey()))
                .orElse("");
        return fmt(", mean %s%s", seconds(sum("modelfs_read_seconds_sum", which) / n), p99.isEmpty() ? "" : ", " + p99);
    }

    /** How many label values a line lists before it sums up the rest (the report fits one screen). */
    static final int TOP = 5;

    /**
     * The label values of {@code name}'s samples by their total, largest first, at most {@value #TOP} and then
     * how many more: {@code "EIO 2, ENOENT 1"}, {@code "a 9, b 8, c 7, d 6, e 5 and 3 more"}.
     */
    private String top(String name, String label) {
        Map<String, Double> by = samples.stream().filter(s -> s.name().equals(name))
                .collect(Collectors.groupingBy(s -> s.label(label), TreeMap::new, Collectors.summingDouble(MetricsText.Sample::value)));
        List<String> all = by.entrySet().stream().filter(e -> e.getValue() > 0)
                .sorted(Map.Entry.<String, Double>comparingByValue(Comparator.reverseOrder()))
                .map(e -> e.getKey() + " " + count(e.getValue())).toList();
        String shown = String.join(", ", all.subList(0, Math.min(TOP, all.size())));
        return all.size() > TOP ? shown + " and " + (all.size() - TOP) + " more" : shown;
    }

    /** {@code 1,234}. */
    static String count(double n) {
        return fmt("%,d", Math.round(n));
    }

    /** Bytes in binary units: {@code 512 B}, {@code 1.5 KiB}, {@code 320.8 MiB}. */
    static String bytes(double n) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        int u = 0;
        while (n >= 1024 && u < units.length - 1) {
            n /= 1024;
            u++;
        }
        return u == 0 ? fmt("%d B", Math.round(n)) : fmt("%.1f %s", n, units[u]);
    }

    /** A duration: {@code 35 µs}, {@code 1.25 ms}, {@code 2.31 s}. */
    static String seconds(double s) {
        if (s < 1e-3) {
            return fmt("%.0f µs", s * 1e6);
        }
        return s < 1 ? fmt("%.2f ms", s * 1e3) : fmt("%.2f s", s);
    }

    private static String fmt(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }
}
