package dev.modelfs.nfs;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Logger;
import org.dcache.oncrpc4j.rpc.OncRpcProgram;
import org.dcache.oncrpc4j.rpc.ReplyQueue;
import org.dcache.oncrpc4j.rpc.RpcDispatchable;
import org.dcache.oncrpc4j.rpc.RpcDispatcher;
import org.dcache.oncrpc4j.rpc.RpcProtocolFilter;
import org.glassfish.grizzly.filterchain.FilterChainBuilder;
import org.glassfish.grizzly.filterchain.TransportFilter;
import org.glassfish.grizzly.nio.transport.TCPNIOServerConnection;
import org.glassfish.grizzly.nio.transport.TCPNIOTransport;
import org.glassfish.grizzly.nio.transport.TCPNIOTransportBuilder;
import org.glassfish.grizzly.strategies.SameThreadIOStrategy;

/**
 * The TCP side of the RPC server: oncrpc4j's call decoding and dispatch ({@code RpcProtocolFilter},
 * {@code RpcDispatcher}) behind modelfs's own bounded front ({@link PeerGate}, {@link RecordParser},
 * {@link CallHeaderCheck}). oncrpc4j's {@code OncRpcSvc} cannot put a filter in front of its decoder,
 * so this class assembles the same Grizzly filter chain itself.
 *
 * <p>Invariants: refused peers are closed at accept; every record is bounded and its credential checked
 * before oncrpc4j decodes it; the filter chain (accept check, framing, header check, decoding) runs on the
 * selector thread that read the bytes, never blocking (Grizzly's {@code SameThreadIOStrategy}: one thread hand-off per
 * call instead of two, measured in BENCHMARKS.md), and calls run on {@code workers} daemon threads, grown on
 * demand by up to {@value #MORE_WORKERS} while every one is busy ({@link GrowingWorkers});
 * {@link #close} stops accepting, waits up to its grace period for calls in progress, then stops.
 */
final class RpcListener implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(RpcListener.class.getName());

    /** How many threads the call pool may grow beyond its core when every thread is busy ({@link GrowingWorkers}). */
    static final int MORE_WORKERS = 64;

    private final TCPNIOTransport transport;
    private final ExecutorService workers;
    private final InetSocketAddress address;

    private RpcListener(TCPNIOTransport transport, ExecutorService workers, InetSocketAddress address) {
        this.transport = transport;
        this.workers = workers;
        this.address = address;
    }

    static RpcListener start(String bind, int port, AllowList allow, Map<OncRpcProgram, RpcDispatchable> programs,
                             int workerCount) throws IOException {
        ExecutorService workers = GrowingWorkers.create("modelfs-nfs", workerCount, workerCount + MORE_WORKERS);
        PeerLog peers = new PeerLog();
        TCPNIOTransport transport = TCPNIOTransportBuilder.newInstance()
                .setReuseAddress(true)
                .setTcpNoDelay(true)
                .setIOStrategy(SameThreadIOStrategy.getInstance())   // the chain only frames and checks; calls run on `workers`
                .build();
        transport.setProcessor(FilterChainBuilder.stateless()
                .add(new TransportFilter())
                .add(new PeerGate(allow, peers))
                .add(new RecordParser(peers))
                .add(new RpcProtocolFilter(new ReplyQueue()))
                .add(new RpcDispatcher(workers, Map.copyOf(programs), false, call -> { }))
                .build());
        try {
            TCPNIOServerConnection server = transport.bind(bind, port, 4096);
            transport.start();
            return new RpcListener(transport, workers, (InetSocketAddress) server.getLocalAddress());
        } catch (IOException | RuntimeException e) {
            transport.shutdownNow();
            workers.shutdownNow();
            throw e;
        }
    }

    InetSocketAddress address() {
        return address;
    }

    @Override
    public void close() {
        try {
            transport.shutdown(5, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.fine("transport stop: " + e);
        }
        try {
            transport.shutdownNow();
        } catch (IOException e) {
            LOG.fine("transport stop: " + e);
        }
        workers.shutdownNow();
    }
}
