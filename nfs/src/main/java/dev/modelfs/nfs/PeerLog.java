package dev.modelfs.nfs;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;
import org.glassfish.grizzly.Connection;

/**
 * One log line per peer address and kind of refusal, so that a hostile peer cannot flood the log.
 *
 * <p>Invariants: remembers at most {@link #MAX_REMEMBERED} (address, message) pairs; beyond that,
 * refusals are no longer logged (they are still enforced).
 */
final class PeerLog {
    private static final Logger LOG = Logger.getLogger(PeerLog.class.getName());
    static final int MAX_REMEMBERED = 1000;
    private final Set<String> logged = ConcurrentHashMap.newKeySet();

    static InetAddress address(Connection<?> c) {
        return c.getPeerAddress() instanceof InetSocketAddress a ? a.getAddress() : null;
    }

    void once(Connection<?> c, String message) {
        once(address(c), message);
    }

    void once(InetAddress peer, String message) {
        String who = peer == null ? "?" : peer.getHostAddress();
        if (logged.size() < MAX_REMEMBERED && logged.add(who + " " + message)) {
            LOG.warning("client " + who + ": " + message);
        }
    }
}
