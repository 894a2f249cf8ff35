package dev.modelfs.nfs;

import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.Node;
import dev.modelfs.serve.ServePolicy;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.dcache.oncrpc4j.rpc.OncRpcException;
import org.dcache.oncrpc4j.rpc.RpcAuthTypeUnix;
import org.dcache.oncrpc4j.rpc.RpcCall;
import org.dcache.oncrpc4j.rpc.RpcDispatchable;
import org.dcache.oncrpc4j.xdr.Xdr;
import org.dcache.oncrpc4j.xdr.XdrVoid;
import org.glassfish.grizzly.Buffer;

/**
 * NFS version 3 (RFC 1813), read-only, over the served tree.
 *
 * <p>Invariants: every procedure that would change anything answers NFS3ERR_ROFS; a handle that is
 * not ours is NFS3ERR_BADHANDLE, one whose model or path is gone NFS3ERR_STALE; a failure to list or
 * read a model's files is NFS3ERR_NOENT (missing blob), NFS3ERR_ACCES (a refused link) or NFS3ERR_IO
 * (anything else) for that model's files only, logged once and reported with the handle's model ({@link ServePolicy#failed}),
 * as every admitted call and every READ answered is reported to the policy's telemetry; READ data is read from the blob once,
 * into a pooled direct buffer the transport writes as it is ({@link ReplyBuffers}), or, when all
 * are in use, straight into the reply buffer.
 */
final class Nfs3Program implements RpcDispatchable {
    private static final byte[] ZEROS = new byte[Nfs3.RTMAX];
    private static final byte[] VERIFIER = new byte[8];

    private final HandleResolver handles;
    private final OpenFiles open;
    private final ReplyBuffers buffers = new ReplyBuffers(32, Nfs3.RTMAX);
    private final AllowList allow;
    private final ServePolicy policy;
    private final Wire.Shown shown;

    /** A failed procedure: its nfsstat3. */
    private static final class Failure extends Exception {
        final int status;

        Failure(int status) {
            super(null, null, false, false);
            this.status = status;
        }
    }

    Nfs3Program(HandleResolver handles, OpenFiles open, AllowList allow, ServePolicy policy, Wire.Shown shown) {
        this.handles = handles;
        this.open = open;
        this.allow = allow;
        this.policy = policy;
        this.shown = shown;
    }

    @Override
    public void dispatchOncRpcCall(RpcCall call) throws OncRpcException, IOException {
        if (!Access.admit(call, allow)) {
            return;
        }
        int proc = call.getProcedure();
        policy.telemetry().nfsCall(proc, Access.client(call));
        try {
            switch (proc) {
                case Nfs3.NULL -> call.reply(XdrVoid.XDR_VOID);
                case Nfs3.GETATTR -> getattr(call);
                case Nfs3.LOOKUP -> lookup(call);
                case Nfs3.ACCESS -> access(call);
                case Nfs3.READLINK -> readlink(call);
                case Nfs3.READ -> read(call);
                case Nfs3.READDIR -> readdir(call, false);
                case Nfs3.READDIRPLUS -> readdir(call, true);
                case Nfs3.FSSTAT -> fsstat(call);
                case Nfs3.FSINFO -> fsinfo(call);
                case Nfs3.PATHCONF -> pathconf(call);
                // read-only: the failure shape of each (RFC 1813): wcc_data is two absent attributes
                case Nfs3.SETATTR, Nfs3.WRITE, Nfs3.CREATE, Nfs3.MKDIR, Nfs3.SYMLINK, Nfs3.MKNOD, Nfs3.REMOVE, Nfs3.RMDIR,
                     Nfs3.COMMIT -> status(call, Nfs3.ERR_ROFS, 2);
                case Nfs3.RENAME -> status(call, Nfs3.ERR_ROFS, 4);
                case Nfs3.LINK -> status(call, Nfs3.ERR_ROFS, 3);
                default -> call.failProcedureUnavailable();
            }
        } catch (Failure f) {
            status(call, f.status, proc == Nfs3.GETATTR ? 0 : 1);
        } catch (IOException e) {
            throw e;                                   // undecodable arguments (OncRpcException, BadXdr...): GARBAGE_ARGS
        } catch (Throwable t) {                        // a bug or an Error: answer NFS3ERR_IO, the worker carries on
            internalError(call, proc, t);
        }
    }

    /** Answers a call whose handling threw something unexpected with NFS3ERR_IO; logs each kind once. */
    private void internalError(RpcCall call, int proc, Throwable t) {
        try {
            policy.logOnce("NFS procedure " + proc + " failed: " + t);
            status(call, Nfs3.ERR_IO, proc == Nfs3.GETATTR ? 0 : 1);
        } catch (Throwable again) {
            call.failRpcSystem();
        }
    }

    /** A failure reply: the status, then {@code absent} FALSE booleans (absent post-op attributes). */
    private static void status(RpcCall call, int status, int absent) {
        Wire.reply(call, out -> {
            out.xdrEncodeInt(status);
            for (int i = 0; i < absent; i++) {
                out.xdrEncodeBoolean(false);
            }
        });
    }

    private Node node(FileHandle h) throws Failure {
        if (h == null) {
            throw new Failure(Nfs3.ERR_BADHANDLE);
        }
        Node n;
        try {
            n = handles.resolve(h);
        } catch (RuntimeException e) {
            throw failure("resolve " + h, h, e);
        }
        if (n == null) {
            throw new Failure(Nfs3.ERR_STALE);
        }
        return n;
    }

    private DirNode dir(FileHandle h) throws Failure {
        if (node(h) instanceof DirNode d) {
            return d;
        }
        throw new Failure(Nfs3.ERR_NOTDIR);
    }

    /** Lists directory {@code d} that {@code h} names (a model directory parses its headers on first listing, which may fail). */
    private Map<String, Node> children(DirNode d, FileHandle h) throws Failure {
        try {
            return d.children();
        } catch (RuntimeException e) {
            throw failure("list directory " + Long.toHexString(d.inode()), h, e);
        }
    }

    /** A failure of {@code what} on handle {@code h} (null: none), logged once and reported against the handle's model. */
    private Failure failure(String what, FileHandle h, Throwable e) {
        return new Failure(switch (policy.failed(what, h == null ? null : handles.modelPath(h), e)) {
            case ENOENT -> Nfs3.ERR_NOENT;
            case EACCES -> Nfs3.ERR_ACCES;
            case EIO -> Nfs3.ERR_IO;
        });
    }

    private void getattr(RpcCall call) throws OncRpcException, IOException, Failure {
        Node n = node(Wire.args(call, Wire::handle));
        Wire.reply(call, out -> {
            out.xdrEncodeInt(Nfs3.OK);
            Wire.fattr3(out, n, shown);
        });
    }

    private record Named(FileHandle dir, String name) {}

    private void lookup(RpcCall call) throws OncRpcException, IOException, Failure {
        Named a = Wire.args(call, in -> new Named(Wire.handle(in), Wire.string(in, 4096)));
        DirNode d = dir(a.dir());
        if (a.name().getBytes(StandardCharsets.UTF_8).length > 255) {
            throw new Failure(Nfs3.ERR_NAMETOOLONG);
        }
        FileHandle up = a.name().equals("..") ? handles.parent(a.dir()) : null;
        Node child = a.name().equals(".") ? d : up != null ? handles.resolve(up) : children(d, a.dir()).get(a.name());
        if (child == null) {
            Wire.reply(call, out -> {
                out.xdrEncodeInt(Nfs3.ERR_NOENT);
                Wire.postOpAttr(out, d, shown);
            });
            return;
        }
        FileHandle ch = up != null ? up : child == d ? a.dir() : handles.child(a.dir(), child);
        Wire.reply(call, out -> {
            out.xdrEncodeInt(Nfs3.OK);
            Wire.handle(out, ch);
            Wire.postOpAttr(out, child, shown);
            Wire.postOpAttr(out, d, shown);
        });
    }

    private record HandleAndInt(FileHandle fh, int value) {}

    private void access(RpcCall call) throws OncRpcException, IOException, Failure {
        HandleAndInt a = Wire.args(call, in -> new HandleAndInt(Wire.handle(in), in.xdrDecodeInt()));
        Node n = node(a.fh());
        int allowed = n instanceof DirNode ? Nfs3.ACCESS_READ | Nfs3.ACCESS_LOOKUP | Nfs3.ACCESS_EXECUTE
                : n instanceof FileNode f && readable(call, f) ? Nfs3.ACCESS_READ : 0;
        Wire.reply(call, out -> {
            out.xdrEncodeInt(Nfs3.OK);
            Wire.postOpAttr(out, n, shown);
            out.xdrEncodeInt(a.value() & allowed);
        });
    }

    private void readlink(RpcCall call) throws OncRpcException, IOException, Failure {
        Node n = node(Wire.args(call, Wire::handle));
        Wire.reply(call, out -> {            // the tree has no symbolic links
            out.xdrEncodeInt(Nfs3.ERR_INVAL);
            Wire.postOpAttr(out, n, shown);
        });
    }

    /**
     * Whether the file's mode lets the caller read it, the class (owner, group, other) chosen from its
     * AUTH_SYS credential against the owner the server shows; any other credential is "other".
     */
    private boolean readable(RpcCall call, FileNode f) {
        ServePolicy.Attributes a = policy.attributes(f);
        int mode = a.permissions();
        if (call.getCredential() instanceof RpcAuthTypeUnix u) {
            if (u.uid() == a.uid()) {
                return (mode & 0400) != 0;
            }
            boolean group = u.gid() == a.gid();
            for (int g : u.gids()) {
                group |= g == a.gid();
            }
            if (group) {
                return (mode & 0040) != 0;
            }
        }
        return (mode & 0004) != 0;
    }

    private record ReadArgs(FileHandle fh, long offset, long count) {}

    private void read(RpcCall call) throws OncRpcException, IOException, Failure {
        long start = System.nanoTime();
        ReadArgs a = Wire.args(call, in -> new ReadArgs(Wire.handle(in), in.xdrDecodeLong(),
                Integer.toUnsignedLong(in.xdrDecodeInt())));
        Node n = node(a.fh());
        if (!(n instanceof FileNode f)) {
            throw new Failure(Nfs3.ERR_ISDIR);
        }
        if (!readable(call, f)) {
            throw new Failure(Nfs3.ERR_ACCES);
        }
        long size = f.size();
        long offset = a.offset();
        int count = offset < 0 || offset >= size ? 0 : (int) Math.min(Math.min(a.count(), Nfs3.RTMAX), size - offset);
        boolean eof = offset < 0 || offset + count >= size;
        OpenFiles.Opened o = null;
        if (count > 0) {
            try {
                o = open.open(f);
            } catch (IOException | RuntimeException e) {
                throw failure("open " + Long.toHexString(f.inode()), a.fh(), e);
            }
        }
        ByteBuffer lent = count > 0 && (count & 3) == 0 ? buffers.take() : null;
        try {
            if (lent != null) {
                readIntoLent(o, a.fh(), f, offset, count, eof, lent, call);
                lent = null;         // the transport gives it back once the reply is written
                policy.telemetry().read(f.source().kind(), count, System.nanoTime() - start);
            } else {
                readIntoReply(o, a.fh(), f, offset, count, eof, call, start);
            }
        } catch (Failure e) {
            if (o != null) {
                open.failed(f, o);          // opened afresh by the next READ: its blobs may read again
            }
            throw e;
        } finally {
            if (o != null) {
                o.close();
            }
            if (lent != null) {
                buffers.give(lent);
            }
        }
    }

    /** READ into a pooled direct buffer that the reply then carries as it is (no copy into the reply). */
    private void readIntoLent(OpenFiles.Opened src, FileHandle fh, FileNode f, long offset, int count, boolean eof,
                              ByteBuffer lent, RpcCall call) throws Failure {
        lent.limit(count);
        try {
            long got = src.source().read(offset, MemorySegment.ofBuffer(lent), 0, count);
            if (got != count) {
                throw new IOException("short read: " + got + " of " + count + " bytes");
            }
        } catch (IOException | RuntimeException e) {
            throw failure("read " + Long.toHexString(f.inode()) + " at " + offset, fh, e);
        }
        ReplyBuffers.Lent data = buffers.new Lent(lent);
        Wire.reply(call, out -> {
            out.xdrEncodeInt(Nfs3.OK);
            Wire.postOpAttr(out, f, shown);
            out.xdrEncodeInt(count);
            out.xdrEncodeBoolean(eof);
            out.xdrEncodeShallowByteBuffer(data);       // opaque<>: length, then the buffer itself
        });
    }

    /** READ into space reserved at the end of the reply buffer (when no pooled buffer is free), reported when it succeeds. */
    private void readIntoReply(OpenFiles.Opened src, FileHandle fh, FileNode f, long offset, int count, boolean eof,
                               RpcCall call, long startNanos) {
        Wire.reply(call, out -> {
            int mark = out.asBuffer().position();
            out.xdrEncodeInt(Nfs3.OK);
            Wire.postOpAttr(out, f, shown);
            out.xdrEncodeInt(count);
            out.xdrEncodeBoolean(eof);
            out.xdrEncodeInt(count);
            out.xdrEncodeOpaque(ZEROS, 0, count);     // reserves the data (and its padding) in the reply
            if (count > 0) {
                try {
                    fillData(out, src, offset, count);
                } catch (IOException | RuntimeException e) {
                    int status = failure("read " + Long.toHexString(f.inode()) + " at " + offset, fh, e).status;
                    out.asBuffer().position(mark);    // drop what was written: a failure reply instead
                    out.xdrEncodeInt(status);
                    Wire.postOpAttr(out, f, shown);
                    return;
                }
            }
            policy.telemetry().read(f.source().kind(), count, System.nanoTime() - startNanos);
        });
    }

    /** Reads {@code count} bytes of the file into the space just reserved at the end of the reply. */
    private static void fillData(Xdr out, OpenFiles.Opened src, long offset, int count) throws IOException {
        Buffer buf = out.asBuffer();
        int end = buf.position();
        int at = end - ((4 - (count & 3)) & 3) - count;
        long got;
        if (!buf.isComposite()) {
            ByteBuffer view = buf.toByteBuffer(at, at + count);       // a view of the reply buffer, not a copy
            got = src.source().read(offset, MemorySegment.ofBuffer(view), 0, count);
        } else {
            byte[] tmp = new byte[count];                                // rare: a reply spread over several buffers
            got = src.source().read(offset, MemorySegment.ofArray(tmp), 0, count);
            buf.position(at);
            buf.put(tmp);
            buf.position(end);
        }
        if (got != count) {
            throw new IOException("short read: " + got + " of " + count + " bytes");
        }
    }

    private record ReaddirArgs(FileHandle dir, long cookie, int dircount, int maxcount) {}

    private void readdir(RpcCall call, boolean plus) throws OncRpcException, IOException, Failure {
        ReaddirArgs a = Wire.args(call, in -> {
            FileHandle fh = Wire.handle(in);
            long cookie = in.xdrDecodeLong();
            in.xdrDecodeOpaque(8);                                   // cookie verifier: listings never change
            int dircount = in.xdrDecodeInt();
            int maxcount = plus ? in.xdrDecodeInt() : dircount;
            return new ReaddirArgs(fh, cookie, dircount, maxcount);
        });
        DirNode d = dir(a.dir());
        List<Map.Entry<String, Node>> entries = new ArrayList<>(children(d, a.dir()).entrySet());
        if (a.cookie() < 0 || a.cookie() > entries.size()) {
            throw new Failure(Nfs3.ERR_BAD_COOKIE);
        }
        long max = Integer.toUnsignedLong(a.maxcount());
        long dirMax = Integer.toUnsignedLong(a.dircount());
        long used = 4 + 4 + Nfs3.FATTR3_BYTES + 8 + 4 + 4;          // status, dir attributes, verifier, list end, eof
        long dirUsed = 0;
        int from = (int) a.cookie();
        int to = from;
        while (to < entries.size()) {
            int nameBytes = entries.get(to).getKey().getBytes(StandardCharsets.UTF_8).length;
            long core = 8 + 4 + ((nameBytes + 3) & ~3) + 8;          // fileid, name, cookie
            long size = 4 + core + (plus ? 4 + Nfs3.FATTR3_BYTES + 4 + 4 + 20 : 0);
            if (used + size > max || (plus && dirUsed + core > dirMax)) {
                break;
            }
            used += size;
            dirUsed += core;
            to++;
        }
        if (to == from && from < entries.size()) {
            throw new Failure(Nfs3.ERR_TOOSMALL);
        }
        int last = to;
        Wire.reply(call, out -> {
            out.xdrEncodeInt(Nfs3.OK);
            Wire.postOpAttr(out, d, shown);
            out.xdrEncodeOpaque(VERIFIER, 8);
            for (int i = from; i < last; i++) {
                Map.Entry<String, Node> e = entries.get(i);
                out.xdrEncodeBoolean(true);
                out.xdrEncodeLong(e.getValue().inode());
                out.xdrEncodeString(e.getKey());
                out.xdrEncodeLong(i + 1);
                if (plus) {
                    Wire.postOpAttr(out, e.getValue(), shown);
                    out.xdrEncodeBoolean(true);
                    Wire.handle(out, handles.child(a.dir(), e.getValue()));
                }
            }
            out.xdrEncodeBoolean(false);
            out.xdrEncodeBoolean(last == entries.size());
        });
    }

    private void fsstat(RpcCall call) throws OncRpcException, IOException, Failure {
        Node n = node(Wire.args(call, Wire::handle));
        ServePolicy.Space space;
        try {
            space = policy.space();
        } catch (IOException | RuntimeException e) {
            throw failure("fsstat", null, e);
        }
        Wire.reply(call, out -> {
            out.xdrEncodeInt(Nfs3.OK);
            Wire.postOpAttr(out, n, shown);
            out.xdrEncodeLong(space.totalBytes());
            out.xdrEncodeLong(space.freeBytes());
            out.xdrEncodeLong(space.availableBytes());
            out.xdrEncodeLong(1L << 20);     // files: not meaningful on a read-only tree
            out.xdrEncodeLong(0);
            out.xdrEncodeLong(0);
            out.xdrEncodeInt(0);             // invarsec
        });
    }

    private void fsinfo(RpcCall call) throws OncRpcException, IOException, Failure {
        Node n = node(Wire.args(call, Wire::handle));
        Wire.reply(call, out -> {
            out.xdrEncodeInt(Nfs3.OK);
            Wire.postOpAttr(out, n, shown);
            out.xdrEncodeInt(Nfs3.RTMAX);    // rtmax, rtpref, rtmult
            out.xdrEncodeInt(Nfs3.RTMAX);
            out.xdrEncodeInt(4096);
            out.xdrEncodeInt(Nfs3.WTMAX);    // wtmax, wtpref, wtmult (writes are refused anyway)
            out.xdrEncodeInt(Nfs3.WTMAX);
            out.xdrEncodeInt(4096);
            out.xdrEncodeInt(Nfs3.DTPREF);
            out.xdrEncodeLong(Long.MAX_VALUE);
            out.xdrEncodeInt(0);             // time_delta: 1 ns
            out.xdrEncodeInt(1);
            out.xdrEncodeInt(Nfs3.FSF3_HOMOGENEOUS);
        });
    }

    private void pathconf(RpcCall call) throws OncRpcException, IOException, Failure {
        Node n = node(Wire.args(call, Wire::handle));
        Wire.reply(call, out -> {
            out.xdrEncodeInt(Nfs3.OK);
            Wire.postOpAttr(out, n, shown);
            out.xdrEncodeInt(1);             // linkmax
            out.xdrEncodeInt(ServePolicy.NAME_MAX);   // name_max
            out.xdrEncodeBoolean(true);      // no_trunc
            out.xdrEncodeBoolean(true);      // chown_restricted
            out.xdrEncodeBoolean(false);     // case_insensitive
            out.xdrEncodeBoolean(true);      // case_preserving
        });
    }
}
