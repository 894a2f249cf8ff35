package dev.modelfs.nfs;

import dev.modelfs.view.FileNode;
import dev.modelfs.view.Node;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
 * <p>Invariants: {@link #fattr3} writes exactly {@link Nfs3#FATTR3_BYTES} bytes; attributes are those
 * of the FUSE mount (files {@link FileNode#mode()}, at most 0444; directories 0555; the server's uid and
 * gid; the manifest's mtime).
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
        return FileHandle.decode(opaque(in, Nfs3.FHSIZE3));
    }

    /**
     * A variable-length opaque of at most {@code max} bytes: the length is checked before anything is
     * allocated (oncrpc4j's own decoder allocates whatever the length claims).
     */
    static byte[] opaque(XdrDecodingStream in, int max) throws OncRpcException, IOException {
        int len = in.xdrDecodeInt();
        if (len < 0 || len > max) {
            throw new Oversized("opaque of " + Integer.toUnsignedString(len) + " bytes, at most " + max + " allowed");
        }
        return in.xdrDecodeOpaque(len);
    }

    /** An argument longer than its protocol allows: the call is answered GARBAGE_ARGS. */
    static final class Oversized extends OncRpcException {
        Oversized(String message) {
            super(message);
        }
    }

    /** A string of at most {@code max} bytes (UTF-8), bounded like {@link #opaque}. */
    static String string(XdrDecodingStream in, int max) throws OncRpcException, IOException {
        return new String(opaque(in, max), StandardCharsets.UTF_8);
    }

    static void handle(Xdr out, FileHandle h) {
        out.xdrEncodeDynamicOpaque(h.encode());
    }

    /** Node attributes as the server presents them. */
    record Owner(int uid, int gid, long fsid) {}

    static void fattr3(Xdr out, Node n, Owner owner) {
        boolean file = n instanceof FileNode;
        long size = n instanceof FileNode f ? f.size() : 4096;
        out.xdrEncodeInt(file ? Nfs3.NF3REG : Nfs3.NF3DIR);
        out.xdrEncodeInt(n instanceof FileNode f ? f.mode() : 0555);
        out.xdrEncodeInt(file ? 1 : 2);
        out.xdrEncodeInt(owner.uid());
        out.xdrEncodeInt(owner.gid());
        out.xdrEncodeLong(size);
        out.xdrEncodeLong((size + 511) / 512 * 512);
        out.xdrEncodeInt(0);           // rdev
        out.xdrEncodeInt(0);
        out.xdrEncodeLong(owner.fsid());
        out.xdrEncodeLong(n.inode());
        long sec = Math.floorDiv(n.mtimeNanos(), 1_000_000_000L);
        int nsec = (int) Math.floorMod(n.mtimeNanos(), 1_000_000_000L);
        for (int i = 0; i < 3; i++) {  // atime, mtime, ctime
            out.xdrEncodeInt((int) sec);
            out.xdrEncodeInt(nsec);
        }
    }

    /** post_op_attr: attributes follow when {@code n} is not null. */
    static void postOpAttr(Xdr out, Node n, Owner owner) {
        out.xdrEncodeBoolean(n != null);
        if (n != null) {
            fattr3(out, n, owner);
        }
    }
}
