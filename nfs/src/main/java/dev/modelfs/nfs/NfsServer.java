package dev.modelfs.nfs;

import dev.modelfs.serve.ServePolicy;
import dev.modelfs.serve.ServedTree;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import org.dcache.oncrpc4j.rpc.OncRpcProgram;
import org.dcache.oncrpc4j.rpc.OncRpcSvc;
import org.dcache.oncrpc4j.rpc.OncRpcSvcBuilder;
import org.dcache.oncrpc4j.rpc.net.IpProtocolType;

/**
 * A running NFSv3 + MOUNT v3 server over a {@link ServedTree}: both programs on one TCP port, export
 * {@code /}, read-only.
 *
 * <p>Invariants: registers with rpcbind only when one answers on port 111 (clients that know the port
 * need none); owns the served tree it was given and closes it on {@link #close()}, which is idempotent.
 */
public final class NfsServer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(NfsServer.class.getName());

    /** Where and for whom to serve; {@code port} 0 picks a free port. */
    public record Config(String bind, int port, AllowList allow, int uid, int gid) {}

    private final OncRpcSvc svc;
    private final ServedTree served;
    private final OpenFiles open;
    private final InetSocketAddress address;
    private final boolean published;
    private boolean closed;

    private NfsServer(OncRpcSvc svc, ServedTree served, OpenFiles open, InetSocketAddress address, boolean published) {
        this.svc = svc;
        this.served = served;
        this.open = open;
        this.address = address;
        this.published = published;
    }

    /** Starts serving {@code served}. */
    public static NfsServer start(ServedTree served, Config config) throws IOException {
        HandleResolver handles = new HandleResolver(served.tree());
        ServePolicy policy = served.policy(config.uid(), config.gid());
        OpenFiles open = new OpenFiles(policy, 256);
        Wire.Shown shown = new Wire.Shown(policy, 0x6d6f64656c6673L);   // fsid "modelfs"
        boolean rpcbind = rpcbindRunning();
        OncRpcSvcBuilder b = new OncRpcSvcBuilder()
                .withTCP()
                .withBindAddress(config.bind())
                .withPort(config.port())
                .withWorkerThreadIoStrategy()
                .withTcpNoDelay(true)
                .withWorkerThreadPoolSize(Math.max(8, 2 * Runtime.getRuntime().availableProcessors()))
                .withServiceName("modelfs-nfs")
                .withRpcService(new OncRpcProgram(Nfs3.PROGRAM, Nfs3.VERSION),
                        new Nfs3Program(handles, open, config.allow(), policy, shown))
                .withRpcService(new OncRpcProgram(MountProgram.PROGRAM, MountProgram.VERSION),
                        new MountProgram(handles, config.allow()));
        b = rpcbind ? b.withAutoPublish() : b.withoutAutoPublish();
        OncRpcSvc svc = b.build();
        try {
            svc.start();
        } catch (IOException | RuntimeException e) {
            open.close();
            throw new IOException("cannot serve NFS on " + config.bind() + ":" + config.port() + ": " + e.getMessage(), e);
        }
        InetSocketAddress addr = svc.getInetSocketAddress(IpProtocolType.TCP);
        if (rpcbind) {
            LOG.info("registered NFS and MOUNT with rpcbind");
        }
        return new NfsServer(svc, served, open, addr, rpcbind);
    }

    private static boolean rpcbindRunning() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", 111), 300);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    public InetSocketAddress address() {
        return address;
    }

    /** Files open now (recently read files whose blobs stay mapped). */
    public int openFiles() {
        return open.size();
    }

    public boolean publishedToRpcbind() {
        return published;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            svc.stop(5, TimeUnit.SECONDS);
        } catch (IOException | RuntimeException e) {
            LOG.fine("stop: " + e);
        }
        open.close();
        served.close();
    }
}
