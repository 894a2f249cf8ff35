package dev.modelfs.nfs;

import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.glassfish.grizzly.Connection;
import org.glassfish.grizzly.filterchain.BaseFilter;
import org.glassfish.grizzly.filterchain.FilterChainContext;
import org.glassfish.grizzly.filterchain.NextAction;

/**
 * The first filter after the transport: a connection from a peer outside {@code --allow}, or beyond
 * {@link #MAX_CONNECTIONS} open connections, is closed as it is accepted, before a byte of it is read
 * or decoded.
 *
 * <p>Invariants: only admitted connections pass reads on; a refusal is logged once per address
 * ({@link PeerLog}); at most {@link #MAX_CONNECTIONS} connections are admitted at once, so the bytes
 * buffered for partial records are at most {@code MAX_CONNECTIONS × RecordParser.MAX_RECORD}.
 */
final class PeerGate extends BaseFilter {
    static final int MAX_CONNECTIONS = 256;

    private final AllowList allow;
    private final PeerLog log;
    private final Set<Connection<?>> admitted = ConcurrentHashMap.newKeySet();

    PeerGate(AllowList allow, PeerLog log) {
        this.allow = allow;
        this.log = log;
    }

    @Override
    public NextAction handleAccept(FilterChainContext ctx) throws IOException {
        Connection<?> c = ctx.getConnection();
        if (!allow.allows(PeerLog.address(c))) {
            log.once(c, "refused, not in --allow " + String.join(",", allow.texts()));
            c.closeSilently();
            return ctx.getStopAction();
        }
        if (admitted.size() >= MAX_CONNECTIONS) {
            log.once(c, "refused, already " + MAX_CONNECTIONS + " connections open");
            c.closeSilently();
            return ctx.getStopAction();
        }
        admitted.add(c);
        return ctx.getInvokeAction();
    }

    @Override
    public NextAction handleRead(FilterChainContext ctx) throws IOException {
        if (!admitted.contains(ctx.getConnection())) {
            ctx.getConnection().closeSilently();
            return ctx.getStopAction();
        }
        return ctx.getInvokeAction();
    }

    @Override
    public NextAction handleClose(FilterChainContext ctx) throws IOException {
        admitted.remove(ctx.getConnection());
        return ctx.getInvokeAction();
    }
}
