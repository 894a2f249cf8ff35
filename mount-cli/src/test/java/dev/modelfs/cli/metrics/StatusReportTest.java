package dev.modelfs.cli.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class StatusReportTest {
    @Test
    void humanUnits() {
        assertEquals("0 B", StatusReport.bytes(0));
        assertEquals("1023 B", StatusReport.bytes(1023));
        assertEquals("1.0 KiB", StatusReport.bytes(1024));
        assertEquals("1.5 MiB", StatusReport.bytes(1.5 * 1048576));
        assertEquals("2.0 GiB", StatusReport.bytes(2L << 30));
        assertEquals("1,234,567", StatusReport.count(1234567));
        assertEquals("35 µs", StatusReport.seconds(35e-6));
        assertEquals("1.25 ms", StatusReport.seconds(1.25e-3));
        assertEquals("2.50 s", StatusReport.seconds(2.5));
    }

    @Test
    void oneLinePerFigureFromTheSamples() {
        String text = """
                modelfs_info{front="nfs"} 1
                modelfs_models{state="served"} 5
                modelfs_models{state="broken"} 2
                modelfs_open_files 3
                modelfs_read_bytes_total{kind="passthrough"} 3145728
                modelfs_read_bytes_total{kind="converted"} 1024
                modelfs_read_seconds_count{kind="passthrough"} 3
                modelfs_read_seconds_sum{kind="passthrough"} 0.003
                modelfs_read_seconds_bucket{kind="passthrough",le="0.001"} 2
                modelfs_read_seconds_bucket{kind="passthrough",le="0.0025"} 3
                modelfs_read_seconds_bucket{kind="passthrough",le="+Inf"} 3
                modelfs_read_seconds_count{kind="converted"} 1
                modelfs_read_seconds_sum{kind="converted"} 20
                modelfs_read_seconds_bucket{kind="converted",le="10.0"} 0
                modelfs_read_seconds_bucket{kind="converted",le="+Inf"} 1
                modelfs_chunk_cache_hits_total 3
                modelfs_chunk_cache_misses_total 1
                modelfs_chunk_cache_evictions_total 0
                modelfs_chunk_cache_bytes 1048576
                modelfs_chunk_cache_capacity_bytes 536870912
                modelfs_conversions_total 1
                modelfs_conversion_cpu_seconds_total 0.5
                modelfs_errors_total{errno="EIO",model="truncated"} 2
                modelfs_errors_total{errno="ENOENT",model="missing-blob"} 1
                modelfs_nfs_operations_total{procedure="READ",client="127.0.0.1"} 4
                modelfs_nfs_operations_total{procedure="LOOKUP",client="127.0.0.1"} 2
                """;
        StatusReport r = new StatusReport(MetricsText.parse(text));
        assertTrue(r.isNfs());
        List<String> lines = r.render("title").lines().toList();
        assertEquals("title", lines.get(0));
        assertEquals("models       5 served, 2 broken", lines.get(1));
        assertEquals("open files   3", lines.get(2));
        assertEquals("reads        4, 3.0 MiB served, mean 5.00 s, 99% over 10.00 s", lines.get(3));
        assertEquals("  passthrough      3.0 MiB         3 reads, mean 1.00 ms, 99% within 2.50 ms", lines.get(4));
        assertEquals("  reassembled          0 B         0 reads", lines.get(5));
        assertEquals("  converted        1.0 KiB         1 read, mean 20.00 s, 99% over 10.00 s", lines.get(6));
        assertEquals("chunk cache  1.0 MiB of 512.0 MiB held; 3 hits, 1 misses (75.0% hits), 0 evictions", lines.get(8));
        assertEquals("conversions  1 chunks, 500.00 ms CPU", lines.get(9));
        assertEquals("errors       3: EIO 2, ENOENT 1; by model: truncated 2, missing-blob 1", lines.get(10));
        assertEquals("NFS calls    6: READ 4, LOOKUP 2; by client: 127.0.0.1 6", lines.get(11));
        assertEquals(12, lines.size());
        assertFalse(new StatusReport(MetricsText.parse("modelfs_info{front=\"mount\"} 1")).render("t").contains("NFS"));
        assertTrue(lines.stream().noneMatch(l -> l.startsWith("passthrough")), "an NFS server hands nothing to the kernel");
    }

    @Test
    void aMountSaysHowManyOpensTheKernelsPassthroughTook() {
        List<String> lines = new StatusReport(MetricsText.parse("""
                modelfs_info{front="mount"} 1
                modelfs_open_files 1
                modelfs_kernel_passthrough_opens_total 7
                """)).render("t").lines().toList();
        assertEquals("open files   1", lines.get(2));
        assertEquals("passthrough  7 opens handed to the kernel (whole-blob files: their reads never reach modelfs)", lines.get(3));
    }

    @Test
    void longListsStopAfterTheLargestFew() {
        StringBuilder text = new StringBuilder("modelfs_info{front=\"mount\"} 1\n");
        for (int m = 1; m <= StatusReport.TOP + 3; m++) {
            text.append("modelfs_errors_total{errno=\"EIO\",model=\"m").append(m).append("\"} ").append(m).append('\n');
        }
        String errors = new StatusReport(MetricsText.parse(text.toString())).render("t").lines()
                .filter(l -> l.startsWith("errors")).findFirst().orElseThrow();
        assertEquals("errors       36: EIO 36; by model: m8 8, m7 7, m6 6, m5 5, m4 4 and 3 more", errors);
    }
}
