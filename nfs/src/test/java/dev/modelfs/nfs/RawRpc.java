package dev.modelfs.nfs;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A byte-level ONC RPC client for tests (RFC 5531 written out by hand, independent of oncrpc4j): it sends
 * well-formed and hostile records and reads replies as raw ints.
 */
final class RawRpc implements AutoCloseable {
    static final int REPLY = 1, MSG_ACCEPTED = 0, MSG_DENIED = 1, AUTH_ERROR = 1, AUTH_BADCRED = 2,
            SUCCESS = 0, GARBAGE_ARGS = 4, SYSTEM_ERR = 5;

    private final Socket socket;
    private final DataOutputStream out;
    private final DataInputStream in;

    RawRpc(InetSocketAddress server) throws IOException {
        socket = new Socket();
        socket.connect(server, 5000);
        socket.setSoTimeout(20_000);
        out = new DataOutputStream(socket.getOutputStream());
        in = new DataInputStream(socket.getInputStream());
    }

    /** An XDR writer. */
    static final class Xdr {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final DataOutputStream d = new DataOutputStream(bytes);

        Xdr i(int v) {
            try {
                d.writeInt(v);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return this;
        }

        Xdr l(long v) {
            return i((int) (v >>> 32)).i((int) v);
        }

        Xdr opaque(byte[] b) {
            i(b.length);
            bytes.writeBytes(b);
            bytes.writeBytes(new byte[(4 - (b.length & 3)) & 3]);
            return this;
        }

        Xdr string(String s) {
            return opaque(s.getBytes(StandardCharsets.UTF_8));
        }

        Xdr raw(byte[] b) {
            bytes.writeBytes(b);
            return this;
        }

        byte[] bytes() {
            return bytes.toByteArray();
        }
    }

    /** A sane AUTH_SYS credential (RFC 5531 appendix A) with the given gids. */
    static byte[] authSys(int... gids) {
        Xdr body = new Xdr().i(0).string("t").i(0).i(0).i(gids.length);
        for (int g : gids) {
            body.i(g);
        }
        return new Xdr().i(1).opaque(body.bytes()).bytes();
    }

    /**
     * The hostile credential of issue 21: AUTH_SYS whose gid count claims {@code count} gids while the
     * body is 20 bytes long.
     */
    static byte[] authSysClaimingGids(int count) {
        Xdr body = new Xdr().i(0).i(0).i(0).i(0).i(count);     // stamp, empty machine name, uid, gid, count
        return new Xdr().i(1).opaque(body.bytes()).bytes();
    }

    /** A call record: header, credential, AUTH_NONE verifier, arguments. */
    static byte[] call(int xid, int prog, int vers, int proc, byte[] cred, byte[] args) {
        return new Xdr().i(xid).i(0).i(2).i(prog).i(vers).i(proc).raw(cred).i(0).i(0).raw(args).bytes();
    }

    /** Sends {@code record} as one last fragment. */
    void send(byte[] record) throws IOException {
        out.writeInt(0x80000000 | record.length);
        out.write(record);
        out.flush();
    }

    void sendRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** The next reply record's body as ints (replies here are short or read as a whole). */
    ByteBuffer reply() throws IOException {
        int marker = in.readInt();
        int len = marker & 0x7fffffff;
        if (len > 4 << 20) {
            throw new IOException("reply of " + len + " bytes");
        }
        byte[] b = new byte[len];
        in.readFully(b);
        return ByteBuffer.wrap(b);
    }

    /** True when the server closed the connection without sending anything (EOF or reset). */
    boolean closedWithoutReply() {
        try {
            return in.read() < 0;
        } catch (EOFException e) {
            return true;
        } catch (IOException e) {
            return !e.getMessage().contains("timed out");
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
