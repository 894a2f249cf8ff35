package dev.modelfs.nfs;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;
import org.dcache.oncrpc4j.rpc.RpcAuthError;
import org.dcache.oncrpc4j.rpc.RpcAuthStat;
import org.dcache.oncrpc4j.rpc.RpcCall;
import org.dcache.oncrpc4j.rpc.RpcRejectStatus;

/**
 * The per-call check of the client's address against the {@link AllowList}.
 *
 * <p>Invariants: a refused call gets an RPC AUTH_ERROR (AUTH_TOOWEAK) reply and no other answer; each
 * refused address is logged once (at most 1000 remembered).
 */
final class Access {
    private static final Logger LOG = Logger.getLogger(Access.class.getName());
    private static final Set<InetAddress> LOGGED = ConcurrentHashMap.newKeySet();

    private Access() {}

    static InetAddress client(RpcCall call) {
        InetSocketAddress a = call.getTransport().getRemoteSocketAddress();
        return a == null ? null : a.getAddress();
    }

    static boolean allowed(RpcCall call, AllowList allow) {
        if (allow.allows(client(call))) {
            return true;
        }
        InetAddress c = client(call);
        if (c != null && LOGGED.size() < 1000 && LOGGED.add(c)) {
            LOG.warning("refused client " + c.getHostAddress() + ": not in --allow " + String.join(",", allow.texts()));
        }
        return false;
    }

    /** True when the call may proceed; otherwise answers it with AUTH_TOOWEAK. */
    static boolean admit(RpcCall call, AllowList allow) {
        if (allowed(call, allow)) {
            return true;
        }
        call.reject(RpcRejectStatus.AUTH_ERROR, new RpcAuthError(RpcAuthStat.AUTH_TOOWEAK));
        return false;
    }
}
