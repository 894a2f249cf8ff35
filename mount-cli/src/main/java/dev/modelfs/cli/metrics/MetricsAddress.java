package dev.modelfs.cli.metrics;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * {@code --metrics ADDR:PORT}: where the Prometheus endpoint listens ({@code [v6]:PORT} for IPv6; a bare
 * {@code PORT} means 127.0.0.1; port 0 picks a free one).
 *
 * <p>Invariant: {@link #parse} accepts exactly those forms with a port in 0..65535 and an address that
 * resolves, and throws {@link IllegalArgumentException} naming the problem otherwise.
 */
public final class MetricsAddress {
    private MetricsAddress() {}

    public static InetSocketAddress parse(String text) {
        String t = text.trim();
        int colon = t.lastIndexOf(':');
        String host = colon < 0 ? "127.0.0.1" : t.substring(0, colon);
        String port = t.substring(colon + 1);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        } else if (host.contains(":")) {
            throw new IllegalArgumentException("write an IPv6 address in brackets: [" + host + "]:PORT");
        }
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not ADDR:PORT: " + text);
        }
        if (p < 0 || p > 65535 || host.isEmpty()) {
            throw new IllegalArgumentException("not ADDR:PORT: " + text);
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), p);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("unknown address " + host);
        }
    }

    /**
     * {@code HOST:PORT} to reach {@code bound} from this machine: the loopback address when it listens on
     * every interface.
     */
    public static String reachable(InetSocketAddress bound) {
        InetAddress a = bound.getAddress();
        String host;
        if (a.isAnyLocalAddress()) {
            host = a instanceof Inet6Address ? "[::1]" : "127.0.0.1";
        } else {
            host = a instanceof Inet6Address ? "[" + a.getHostAddress() + "]" : a.getHostAddress();
        }
        return host + ":" + bound.getPort();
    }
}
