package dev.modelfs.nfs;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import java.util.logging.Logger;
import org.dcache.oncrpc4j.portmap.GenericPortmapClient;
import org.dcache.oncrpc4j.portmap.OncPortmapClient;
import org.dcache.oncrpc4j.rpc.OncRpcClient;
import org.dcache.oncrpc4j.rpc.OncRpcException;
import org.dcache.oncrpc4j.rpc.OncRpcProgram;
import org.dcache.oncrpc4j.rpc.net.InetSocketAddresses;
import org.dcache.oncrpc4j.rpc.net.IpProtocolType;

/**
 * Registration of the server's programs with a local rpcbind (port 111), so that {@code showmount} and
 * clients without port options find it.
 *
 * <p>Invariants: does nothing when no rpcbind answers on 127.0.0.1:111; failures are logged, never
 * thrown (a server without rpcbind works for clients that name the port).
 */
final class Rpcbind {
    private static final Logger LOG = Logger.getLogger(Rpcbind.class.getName());
    private static final String OWNER = System.getProperty("user.name", "modelfs");

    private Rpcbind() {}

    static boolean running() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", 111), 300);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Replaces any registration of {@code programs} by this server's {@code tcp} address. */
    static void publish(Set<OncRpcProgram> programs, InetSocketAddress at) {
        String netid = at.getAddress() instanceof java.net.Inet6Address ? "tcp6" : "tcp";
        String uaddr = InetSocketAddresses.uaddrOf(at);
        withClient(pm -> {
            for (OncRpcProgram p : programs) {
                pm.unsetPort(p.getNumber(), p.getVersion(), OWNER);
                pm.setPort(p.getNumber(), p.getVersion(), netid, uaddr, OWNER);
            }
        });
    }

    static void clear(Set<OncRpcProgram> programs) {
        withClient(pm -> {
            for (OncRpcProgram p : programs) {
                pm.unsetPort(p.getNumber(), p.getVersion(), OWNER);
            }
        });
    }

    private interface Action {
        void run(OncPortmapClient pm) throws OncRpcException, IOException, TimeoutException;
    }

    private static void withClient(Action action) {
        try (OncRpcClient client = new OncRpcClient(InetAddress.getLoopbackAddress(), IpProtocolType.UDP, 111)) {
            action.run(new GenericPortmapClient(client.connect()));
        } catch (IOException | TimeoutException | RuntimeException e) {
            LOG.warning("rpcbind: " + e.getMessage());
        }
    }
}
