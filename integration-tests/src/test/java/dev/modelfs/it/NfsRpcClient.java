package dev.modelfs.it;

import java.io.IOException;
import java.net.InetAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 * A minimal NFSv3 / MOUNT v3 client written from RFC 1813 on the RPC library, for what libnfs's
 * command-line tools cannot do: keep a file handle across a server restart, and send mutating
 * procedures. Independent of the server's own XDR code.
 */
final class NfsRpcClient implements AutoCloseable {
    static final int NFS = 100003, MOUNT = 100005;
    static final int NFS3_OK = 0, NFS3ERR_ROFS = 30, NFS3ERR_STALE = 70, NFS3ERR_BADHANDLE = 10001;

    private final OncRpcClient client;
    private final RpcTransport transport;
    private final RpcAuth auth = new RpcAuthTypeUnix(0, 0, new int[] {0}, 0, "modelfs-test");

    NfsRpcClient(int port) throws IOException {
        client = new OncRpcClient(InetAddress.getLoopbackAddress(), IpProtocolType.TCP, port);
        transport = client.connect(10, TimeUnit.SECONDS);
    }

    @FunctionalInterface
    interface Enc {
        void encode(XdrEncodingStream x) throws OncRpcException, IOException;
    }

    @FunctionalInterface
    interface Dec<T> {
        T decode(XdrDecodingStream x) throws OncRpcException, IOException;
    }

    <T> T call(int program, int proc, Enc args, Dec<T> result) throws IOException {
        Object[] out = new Object[1];
        XdrAble a = new XdrAble() {
            public void xdrDecode(XdrDecodingStream x) {
                throw new UnsupportedOperationException();
            }

            public void xdrEncode(XdrEncodingStream x) throws OncRpcException, IOException {
                args.encode(x);
            }
        };
        XdrAble r = new XdrAble() {
            public void xdrDecode(XdrDecodingStream x) throws OncRpcException, IOException {
                out[0] = result.decode(x);
            }

            public void xdrEncode(XdrEncodingStream x) {
                throw new UnsupportedOperationException();
            }
        };
        try {
            new RpcCall(program, 3, auth, transport).call(proc, a, r, 20, TimeUnit.SECONDS, auth);
        } catch (TimeoutException e) {
            throw new IOException("no reply within 20 s", e);
        }
        @SuppressWarnings("unchecked")
        T t = (T) out[0];
        return t;
    }

    record Fh(int status, byte[] fh) {}

    /** MOUNT MNT: status and the root handle. */
    Fh mount(String path) throws IOException {
        return call(MOUNT, 1, x -> x.xdrEncodeString(path), x -> {
            int st = x.xdrDecodeInt();
            return new Fh(st, st == 0 ? x.xdrDecodeDynamicOpaque() : null);
        });
    }

    /** LOOKUP: status and the child's handle. */
    Fh lookup(byte[] dir, String name) throws IOException {
        return call(NFS, 3, x -> {
            x.xdrEncodeDynamicOpaque(dir);
            x.xdrEncodeString(name);
        }, x -> {
            int st = x.xdrDecodeInt();
            return new Fh(st, st == 0 ? x.xdrDecodeDynamicOpaque() : null);
        });
    }

    /** Walks a relative path from {@code root} by LOOKUPs. */
    byte[] walk(byte[] root, String path) throws IOException {
        byte[] fh = root;
        for (String part : path.split("/")) {
            Fh r = lookup(fh, part);
            if (r.status() != 0) {
                throw new IOException("LOOKUP " + part + " of " + path + ": status " + r.status());
            }
            fh = r.fh();
        }
        return fh;
    }

    record Read(int status, boolean eof, byte[] data) {}

    /** READ: status, eof and the bytes. */
    Read read(byte[] fh, long offset, int count) throws IOException {
        return call(NFS, 6, x -> {
            x.xdrEncodeDynamicOpaque(fh);
            x.xdrEncodeLong(offset);
            x.xdrEncodeInt(count);
        }, x -> {
            int st = x.xdrDecodeInt();
            if (x.xdrDecodeBoolean()) {
                x.xdrDecodeOpaque(84);      // fattr3
            }
            if (st != 0) {
                return new Read(st, false, null);
            }
            int n = x.xdrDecodeInt();
            boolean eof = x.xdrDecodeBoolean();
            byte[] data = x.xdrDecodeDynamicOpaque();
            if (data.length != n) {
                throw new IOException("READ count " + n + " but " + data.length + " bytes");
            }
            return new Read(st, eof, data);
        });
    }

    /** Reads a whole file by READs of {@code chunk} bytes. */
    byte[] readAll(byte[] fh, int chunk) throws IOException {
        var out = new java.io.ByteArrayOutputStream();
        long off = 0;
        while (true) {
            Read r = read(fh, off, chunk);
            if (r.status() != 0) {
                throw new IOException("READ at " + off + ": status " + r.status());
            }
            out.write(r.data());
            off += r.data().length;
            if (r.eof()) {
                return out.toByteArray();
            }
        }
    }

    /** The nfsstat3 of any procedure (only the leading status of the reply is read). */
    int status(int proc, Enc args) throws IOException {
        return call(NFS, proc, args, XdrDecodingStream::xdrDecodeInt);
    }

    /** sattr3 that sets nothing. */
    static void noAttrs(XdrEncodingStream x) {
        for (int i = 0; i < 4; i++) {
            x.xdrEncodeBoolean(false);      // mode, uid, gid, size
        }
        x.xdrEncodeInt(0);                  // atime, mtime: DONT_CHANGE
        x.xdrEncodeInt(0);
    }

    @Override
    public void close() throws IOException {
        client.close();
    }
}
