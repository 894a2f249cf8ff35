package dev.modelfs.nfs;

import dev.modelfs.serve.ServePolicy;
import dev.modelfs.serve.ServedTree;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Set;
import java.util.logging.Logger;
import org.dcache.oncrpc4j.rpc.OncRpcProgram;
import org.dcache.oncrpc4j.rpc.RpcDispatchable;

/**
 * A running NFSv3 + MOUNT v3 server over a {@link ServedTree}: both programs on one TCP port, export
 * {@code /}, read-only.
 *
 * <p>Invariants: peers and records are bounded before any decoding ({@link RpcListener}); registers
 * with rpcbind only when one answers on port 111 (clients that know the port need none); owns the served tree it was given and closes it on {@link #close()}, which is idempotent.
 * Sequential readers of converted files get the served tree's read-ahead, as on the FUSE mount.
 */
public final class NfsServer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(NfsServer.class.getName());

    /** Where and for whom to serve; {@code port} 0 picks a free port. */
    public record Config(String bind, int port, AllowList allow, int uid, int gid) {}

    private final RpcListener listener;
    private final Set<OncRpcProgram> programs;
    private final ServedTree served;
    private final OpenFiles open;
    private final InetSocketAddress address;
    private final boolean published;
    /** Whether {@link #close()} closes the served tree (not for a {@link #forWarmup} server, which borrows it). */
    private final boolean ownsServed;
    private boolean closed;

    private NfsServer(RpcListener listener, Set<OncRpcProgram> programs, ServedTree served, OpenFiles open,
                      InetSocketAddress address, boolean published, boolean ownsServed) {
        this.ownsServed = ownsServed;
        this.listener = listener;
        this.programs = programs;
        this.served = served;
        this.open = open;
        this.address = address;
        this.published = published;
    }

    /** Starts serving {@code served}. */
    public static NfsServer start(ServedTree served, Config config) throws IOException {
        return start(served, served.policy(config.uid(), config.gid()), config, true);
    }

    /**
     * A server of a warm-up's own over {@code served} ({@code NfsSession}'s {@link LoopbackWarmup}, while the real
     * server serves): on a free port of 127.0.0.1, for loopback clients only, answering with
     * {@link ServedTree#warmupPolicy} (no metric counts its calls), never published to rpcbind; it borrows the served
     * tree, which its {@link #close()} leaves open.
     */
    public static NfsServer forWarmup(ServedTree served, int uid, int gid) throws IOException {
        Config config = new Config("127.0.0.1", 0, AllowList.parse(java.util.List.of("127.0.0.0/8")), uid, gid);
        return start(served, served.warmupPolicy(uid, gid), config, false);
    }

    private static NfsServer start(ServedTree served, ServePolicy policy, Config config, boolean own) throws IOException {
        HandleResolver handles = new HandleResolver(served.tree());
        OpenFiles open = new OpenFiles(policy, 256);
        Wire.Shown shown = new Wire.Shown(policy, 0x6d6f64656c6673L);   // fsid "modelfs"
        Map<OncRpcProgram, RpcDispatchable> programs = Map.of(
                new OncRpcProgram(Nfs3.PROGRAM, Nfs3.VERSION), new Nfs3Program(handles, open, config.allow(), policy, shown),
                new OncRpcProgram(MountProgram.PROGRAM, MountProgram.VERSION), new MountProgram(handles, config.allow()));
        RpcListener listener;
        try {
            listener = RpcListener.start(config.bind(), config.port(), config.allow(), programs,
                    Math.max(8, 2 * Runtime.getRuntime().availableProcessors()));
        } catch (IOException | RuntimeException e) {
            open.close();
            throw new IOException("cannot serve NFS on " + config.bind() + ":" + config.port() + ": " + e.getMessage(), e);
        }
        boolean rpcbind = own && Rpcbind.running();
        if (rpcbind) {
            Rpcbind.publish(programs.keySet(), listener.address());
            LOG.info("registered NFS and MOUNT with rpcbind");
        }
        return new NfsServer(listener, programs.keySet(), served, open, listener.address(), rpcbind, own);
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

    /** What this server converted, for its last log line (see {@link ServedTree#conversionSummary()}). */
    public String conversionSummary() {
        return served.conversionSummary();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (published) {
            Rpcbind.clear(programs);
        }
        listener.close();
        open.close();
        if (ownsServed) {
            served.close();
        }
    }
}
