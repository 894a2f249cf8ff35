package dev.modelfs.nfs;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;
import org.dcache.oncrpc4j.rpc.OncRpcClient;
import org.dcache.oncrpc4j.rpc.OncRpcException;
import org.dcache.oncrpc4j.rpc.RpcAuth;
import org.dcache.oncrpc4j.rpc.RpcAuthTypeUnix;
import org.dcache.oncrpc4j.rpc.RpcCall;
import org.dcache.oncrpc4j.rpc.RpcTransport;
import org.dcache.oncrpc4j.rpc.net.IpProtocolType;
import org.dcache.oncrpc4j.xdr.XdrAble;
import org.dcache.oncrpc4j.xdr.XdrDecodingStream;
import org.dcache.oncrpc4j.xdr.XdrEncodingStream;

/**
 * The NFS half of a server's warm-up, behind the serving server: a client of its own, over TCP to the address it
 * listens on, that mounts {@code /}, looks up a few files and READs their start many times, several at once on
 * its one connection as the kernel client does, so that the RPC layer, the READ path, the reply encoding and the
 * transport's queued writes are compiled before the first real client's READ (a fresh {@code modelfs nfs} served
 * {@code nfs-cat} at half the speed of its fourth read; BENCHMARKS.md).
 *
 * <p>Invariants: READs only, of files the caller chose (files without conversions, so nothing is converted or
 * cached for it); at most {@link #READS} per file, {@link #IN_FLIGHT} at a time, 2 s per call; any READ that fails
 * ends the file's READs and the run (it returns the files read before); the caller points it at a private server of
 * the warm-up's own on 127.0.0.1 ({@code NfsServer.forWarmup}: the same code as the served one, whatever its
 * {@code --allow} list, and no metric counts its calls); a failure ends it with a fine-level log line.
 */
public final class LoopbackWarmup {
    private static final Logger LOG = Logger.getLogger(LoopbackWarmup.class.getName());
    /** READs per file and run: with the caller's passes ({@link #PASSES}) past C2's invocation threshold (5,000). */
    public static final int READS = 2000;
    private static final int NFS = Nfs3.PROGRAM;
    private static final int MOUNT = MountProgram.PROGRAM;
    private static final long REGION = 32L << 20;
    /** Bytes per READ: the READ path of a full-size one, with a twentieth of its bytes to move. */
    private static final int COUNT = 64 << 10;
    /** READs in flight at once. */
    static final int IN_FLIGHT = 4;
    /** One READ in this many is of full size. */
    private static final int FULL_EVERY = 32;
    /** At most this many runs of {@link #run} ({@code JitQueue.settle}, by the caller). */
    public static final int PASSES = 3;

    private LoopbackWarmup() {}

    /**
     * READs each of {@code paths} (below the export root) on the server at {@code address} as {@code uid}/{@code gid},
     * until done or {@code stop} says so; returns how many files it read.
     */
    public static int run(InetSocketAddress address, Collection<String> paths, int uid, int gid, BooleanSupplier stop) {
        InetAddress host = address.getAddress().isAnyLocalAddress() ? InetAddress.getLoopbackAddress() : address.getAddress();
        int read = 0;
        try (OncRpcClient client = new OncRpcClient(host, IpProtocolType.TCP, address.getPort())) {
            RpcTransport transport = client.connect(2, TimeUnit.SECONDS);
            RpcAuth auth = new RpcAuthTypeUnix(uid, gid, new int[] {gid}, 0, "modelfs-warmup");
            byte[] root = handle(call(transport, auth, MOUNT, 1, x -> x.xdrEncodeString("/")), "MNT /");
            for (String path : paths) {
                if (stop.getAsBoolean()) {
                    break;
                }
                byte[] fh = root;
                for (String name : path.split("/")) {
                    byte[] dir = fh;
                    fh = handle(call(transport, auth, NFS, Nfs3.LOOKUP, x -> {
                        x.xdrEncodeDynamicOpaque(dir);
                        x.xdrEncodeString(name);
                    }), "LOOKUP " + path);
                }
                byte[] file = fh;
                readInFlight(transport, auth, file, path, stop);
                read++;
            }
        } catch (IOException | RuntimeException e) {
            LOG.fine("NFS warm-up stops: " + e);
        }
        return read;
    }

    /**
     * {@link #READS} READs of {@code file}, {@link #IN_FLIGHT} at a time on the one connection (as the kernel client
     * and a parallel reader pipeline them), every {@link #FULL_EVERY}th of {@link Nfs3#RTMAX} bytes (a reply larger
     * than the socket buffer takes the transport's queued-write path), the rest of {@link #COUNT}.
     */
    private static void readInFlight(RpcTransport transport, RpcAuth auth, byte[] file, String path, BooleanSupplier stop)
            throws IOException {
        AtomicInteger next = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> failed = new ConcurrentLinkedQueue<>();
        List<Thread> readers = new ArrayList<>();
        for (int t = 0; t < IN_FLIGHT; t++) {
            readers.add(Thread.ofPlatform().name("modelfs-nfs-warmup-" + t).daemon().start(() -> {
                try {
                    for (int i = next.getAndIncrement(); i < READS && !stop.getAsBoolean() && failed.isEmpty(); i = next.getAndIncrement()) {
                        long offset = (long) i * COUNT % REGION;
                        int count = i % FULL_EVERY == FULL_EVERY - 1 ? Nfs3.RTMAX : COUNT;
                        int status = call(transport, auth, NFS, Nfs3.READ, x -> {
                            x.xdrEncodeDynamicOpaque(file);
                            x.xdrEncodeLong(offset);
                            x.xdrEncodeInt(count);
                        }).status();
                        if (status != 0) {
                            throw new IOException("READ of " + path + ": status " + status);
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    failed.add(e);
                }
            }));
        }
        for (Thread t : readers) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
        if (!failed.isEmpty()) {
            throw failed.peek() instanceof IOException io ? io : new IOException(failed.peek());
        }
    }

    /** A reply's status and, for MNT and LOOKUP, the handle that follows it. */
    private record Reply(int status, byte[] handle) {}

    @FunctionalInterface
    private interface Args {
        void encode(XdrEncodingStream x) throws OncRpcException, IOException;
    }

    private static byte[] handle(Reply r, String what) throws IOException {
        if (r.status() != 0 || r.handle() == null) {
            throw new IOException(what + ": status " + r.status());
        }
        return r.handle();
    }

    /** One call; the reply's leading status, and the handle after it for MNT and LOOKUP (the rest is skipped). */
    private static Reply call(RpcTransport transport, RpcAuth auth, int program, int proc, Args args) throws IOException {
        Reply[] out = new Reply[1];
        boolean handleFollows = program == MOUNT || proc == Nfs3.LOOKUP;
        XdrAble a = new XdrAble() {
            @Override
            public void xdrDecode(XdrDecodingStream x) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void xdrEncode(XdrEncodingStream x) throws OncRpcException, IOException {
                args.encode(x);
            }
        };
        XdrAble r = new XdrAble() {
            @Override
            public void xdrDecode(XdrDecodingStream x) throws OncRpcException, IOException {
                int status = x.xdrDecodeInt();
                out[0] = new Reply(status, status == 0 && handleFollows ? x.xdrDecodeDynamicOpaque() : null);
            }

            @Override
            public void xdrEncode(XdrEncodingStream x) {
                throw new UnsupportedOperationException();
            }
        };
        try {
            new RpcCall(program, 3, auth, transport).call(proc, a, r, 2, TimeUnit.SECONDS, auth);
        } catch (TimeoutException e) {
            throw new IOException("no reply within 2 s", e);
        }
        return out[0];
    }
}
