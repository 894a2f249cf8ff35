package dev.modelfs.cli.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The text format's sample lines, from the format's documentation (prometheus.io "Exposition formats"). */
class MetricsTextTest {
    @Test
    void readsNamesLabelsEscapesAndSpecialValues() {
        List<MetricsText.Sample> s = MetricsText.parse("""
                # HELP http_requests_total The total number of HTTP requests.
                # TYPE http_requests_total counter
                http_requests_total{method="post",code="200"} 1027 1395066363000
                msdos_file_access_time_seconds{path="C:\\\\DIR\\\\FILE.TXT",error="Cannot find file:\\n\\"FILE.TXT\\""} 1.458255915e9
                metric_without_timestamp_and_labels 12.47
                something_weird{problem="division by zero"} +Inf
                rpc_duration_seconds_bucket{le="+Inf"} 144320

                nan_metric NaN
                """);
        assertEquals(6, s.size());
        assertEquals(new MetricsText.Sample("http_requests_total", Map.of("method", "post", "code", "200"), 1027), s.get(0));
        assertEquals("C:\\DIR\\FILE.TXT", s.get(1).label("path"));
        assertEquals("Cannot find file:\n\"FILE.TXT\"", s.get(1).label("error"));
        assertEquals(1.458255915e9, s.get(1).value());
        assertEquals(12.47, s.get(2).value());
        assertEquals(Double.POSITIVE_INFINITY, s.get(3).value());
        assertEquals("+Inf", s.get(4).label("le"));
        assertEquals("", s.get(4).label("absent"));
        assertEquals(Double.NaN, s.get(5).value());
    }

    @Test
    void malformedLinesAreErrorsNamingTheLine() {
        for (String bad : List.of("name{a=\"x\"", "name{a=x} 1", "name", "name{a=\"x\"} one")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MetricsText.parse(bad));
            assertEquals(true, e.getMessage().contains(bad), e.getMessage());
        }
    }
}
