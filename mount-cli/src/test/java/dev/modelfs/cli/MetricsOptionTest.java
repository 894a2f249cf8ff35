package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.cli.metrics.PrometheusTelemetry;
import dev.modelfs.telemetry.Telemetry;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code --metrics}: absent means no endpoint, a malformed address is a usage error, a good one serves on a free port. */
class MetricsOptionTest {
    @CommandLine.Command(name = "holder")
    static final class Holder {
        @CommandLine.Mixin
        MetricsOption metrics;
    }

    static MetricsOption parse(String... args) {
        Holder h = new Holder();
        new CommandLine(h).parseArgs(args);
        return h.metrics;
    }

    @Test
    void withoutTheOptionNothingIsServed() throws IOException {
        MetricsOption o = parse();
        assertNull(o.start(false));
        assertEquals(List.of(), o.args());
        assertSame(Telemetry.NONE, MetricsOption.orNone(null));
        assertEquals("", MetricsOption.describe(null));
    }

    @Test
    void aMalformedAddressIsAUsageErrorAndAGoodOneServes() throws IOException {
        assertThrows(CommandLine.ParameterException.class, () -> parse("--metrics", "no-port").parse());
        MetricsOption o = parse("--metrics", "127.0.0.1:0");
        assertEquals(List.of("--metrics", "127.0.0.1:0"), o.args());
        try (PrometheusTelemetry t = o.start(true)) {
            String d = MetricsOption.describe(t);
            assertTrue(d.startsWith("; metrics at http://127.0.0.1:") && d.endsWith("/metrics") && !d.contains(":0/"), d);
            assertSame(t, MetricsOption.orNone(t));
        }
    }
}
