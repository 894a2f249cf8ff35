package dev.modelfs.cli.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

class MetricsAddressTest {
    @Test
    void addressPortForms() {
        assertEquals(new InetSocketAddress("127.0.0.1", 9464), MetricsAddress.parse("127.0.0.1:9464"));
        assertEquals(new InetSocketAddress("127.0.0.1", 9464), MetricsAddress.parse("9464"));
        assertEquals(new InetSocketAddress("::1", 0), MetricsAddress.parse("[::1]:0"));
        assertEquals(new InetSocketAddress("0.0.0.0", 65535), MetricsAddress.parse(" 0.0.0.0:65535 "));
    }

    @Test
    void reachableFromThisMachine() {
        assertEquals("127.0.0.1:9464", MetricsAddress.reachable(MetricsAddress.parse("0.0.0.0:9464")));
        assertEquals("[::1]:9464", MetricsAddress.reachable(MetricsAddress.parse("[::]:9464")));
        assertEquals("10.1.2.3:80", MetricsAddress.reachable(MetricsAddress.parse("10.1.2.3:80")));
        assertTrue(MetricsAddress.reachable(MetricsAddress.parse("[::1]:80")).matches("\\[0:0:0:0:0:0:0:1]:80"));
    }

    @Test
    void malformedOnesSayWhy() {
        for (String bad : List.of("::1:80", "127.0.0.1:65536", "127.0.0.1:-1", "host:port", ":80", "127.0.0.1:")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MetricsAddress.parse(bad), bad);
            assertTrue(!e.getMessage().isBlank(), bad);
        }
    }
}
