package dev.modelfs.nfs;

import dev.modelfs.serve.ServePolicy;
import dev.modelfs.tree.Node;
import java.io.IOException;
import org.dcache.oncrpc4j.rpc.OncRpcException;
import org.dcache.oncrpc4j.rpc.RpcCall;
import org.dcache.oncrpc4j.xdr.Xdr;
import org.dcache.oncrpc4j.xdr.XdrAble;
import org.dcache.oncrpc4j.xdr.XdrDecodingStream;
import org.dcache.oncrpc4j.xdr.XdrEncodingStream;

/**
 * The XDR shapes of NFSv3 (RFC 1813) this server writes and reads, on oncrpc4j's {@link Xdr}: call
 * arguments through {@link #args}, replies through {@link #reply}, and the attribute structures.
 *
 * <p>Invariants: {@link #fattr3} writes exactly {@link Nfs3#FATTR3_BYTES} bytes; attributes are the
 * {@link ServePolicy}'s, the same as the FUSE mount's.
 */
final class Wire {
    private Wire() {}

    /** Reads a call's arguments. */
    @FunctionalInterface
    interface Decoder<T> {
        T decode(XdrDecodingStream in) throws OncRpcException, IOException;
    }

    /** Writes a reply body after the RPC header. */
    @FunctionalInterface
    interface Encoder {
        void encode(Xdr out) throws OncRpcException, IOException;
    }

    static <T> T args(RpcCall call, Decoder<T> decoder) throws OncRpcException, IOException {
        Object[] out = new Object[1];
        call.retrieveCall(new XdrAble() {
            @Override
            public void xdrDecode(XdrDecodingStream in) throws OncRpcException, IOException {
                out[0] = decoder.decode(in);
            }

            @Override
            public void xdrEncode(XdrEncodingStream x) {
                throw new UnsupportedOperationException();
            }
        });
        @SuppressWarnings("unchecked")
        T t = (T) out[0];
        return t;
    }

    static void reply(RpcCall call, Encoder encoder) {
        call.reply(new XdrAble() {
            @Override
            public void xdrDecode(XdrDecodingStream in) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void xdrEncode(XdrEncodingStream x) throws OncRpcException, IOException {
                encoder.encode((Xdr) x);
            }
        });
    }

    /** An nfs_fh3: our handle, or null for anything else (the caller answers BADHANDLE). */
    static FileHandle handle(XdrDecodingStream in) throws OncRpcException, IOException {
        byte[] b = in.xdrDecodeDynamicOpaque();
        return b.length > Nfs3.FHSIZE3 ? null : FileHandle.decode(b);
    }

    static void handle(Xdr out, FileHandle h) {
        out.xdrEncodeDynamicOpaque(h.encode());
    }

    /** How nodes are shown: the policy's attributes, on this server's file system id. */
    record Shown(ServePolicy policy, long fsid) {}

    static void fattr3(Xdr out, Node n, Shown shown) {
        ServePolicy.Attributes a = shown.policy().attributes(n);
        out.xdrEncodeInt(a.directory() ? Nfs3.NF3DIR : Nfs3.NF3REG);
        out.xdrEncodeInt(a.permissions());
        out.xdrEncodeInt(a.links());
        out.xdrEncodeInt((int) a.uid());
        out.xdrEncodeInt((int) a.gid());
        out.xdrEncodeLong(a.size());
        out.xdrEncodeLong(a.blocks() * 512);   // used
        out.xdrEncodeInt(0);           // rdev
        out.xdrEncodeInt(0);
        out.xdrEncodeLong(shown.fsid());
        out.xdrEncodeLong(a.inode());
        for (int i = 0; i < 3; i++) {  // atime, mtime, ctime
            out.xdrEncodeInt((int) a.mtimeSeconds());
            out.xdrEncodeInt(a.mtimeNanosOfSecond());
        }
    }

    /** post_op_attr: attributes follow when {@code n} is not null. */
    static void postOpAttr(Xdr out, Node n, Shown shown) {
        out.xdrEncodeBoolean(n != null);
        if (n != null) {
            fattr3(out, n, shown);
        }
    }
}
