package dev.modelfs.nfs;

import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.Node;
import java.io.IOException;
import java.net.InetAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.dcache.oncrpc4j.rpc.OncRpcException;
import org.dcache.oncrpc4j.rpc.RpcCall;
import org.dcache.oncrpc4j.xdr.XdrVoid;

/**
 * The MOUNT protocol version 3 (RFC 1813, appendix I) for the one export {@code /}: MNT hands out the
 * root handle (or a directory's below it), UMNT/UMNTALL forget a client, DUMP lists mounted clients,
 * EXPORT lists the export with the allowed networks.
 *
 * <p>Invariants: MNT from a client outside the allow list is MNT3ERR_ACCES; the handle MNT returns is
 * the same {@link FileHandle} LOOKUP would return, so it stays valid across restarts.
 */
final class MountProgram implements org.dcache.oncrpc4j.rpc.RpcDispatchable {
    static final int PROGRAM = 100005;
    static final int VERSION = 3;
    private static final int NULL = 0, MNT = 1, DUMP = 2, UMNT = 3, UMNTALL = 4, EXPORT = 5;
    private static final int MNT3_OK = 0, MNT3ERR_NOENT = 2, MNT3ERR_ACCES = 13, MNT3ERR_NOTDIR = 20, MNT3ERR_IO = 5;
    private static final int AUTH_UNIX = 1;

    private final HandleResolver handles;
    private final AllowList allow;
    private record Mounted(String host, String path) {}
    private final Set<Mounted> mounted = ConcurrentHashMap.newKeySet();

    MountProgram(HandleResolver handles, AllowList allow) {
        this.handles = handles;
        this.allow = allow;
    }

    @Override
    public void dispatchOncRpcCall(RpcCall call) throws OncRpcException, IOException {
        int proc = call.getProcedure();
        if (proc == MNT) {
            mnt(call);
            return;
        }
        if (!Access.admit(call, allow)) {
            return;
        }
        switch (proc) {
            case NULL, UMNTALL -> {
                if (proc == UMNTALL) {
                    String host = host(call);
                    mounted.removeIf(m -> m.host().equals(host));
                }
                call.reply(XdrVoid.XDR_VOID);
            }
            case UMNT -> {
                String path = Wire.args(call, in -> in.xdrDecodeString());
                mounted.remove(new Mounted(host(call), path));
                call.reply(XdrVoid.XDR_VOID);
            }
            case DUMP -> {
                List<Mounted> list = List.copyOf(mounted);
                Wire.reply(call, out -> {
                    for (Mounted m : list) {
                        out.xdrEncodeBoolean(true);
                        out.xdrEncodeString(m.host());
                        out.xdrEncodeString(m.path());
                    }
                    out.xdrEncodeBoolean(false);
                });
            }
            case EXPORT -> Wire.reply(call, out -> {
                out.xdrEncodeBoolean(true);
                out.xdrEncodeString("/");
                for (String g : allow.texts()) {
                    out.xdrEncodeBoolean(true);
                    out.xdrEncodeString(g);
                }
                out.xdrEncodeBoolean(false);      // end of groups
                out.xdrEncodeBoolean(false);      // end of exports
            });
            default -> call.failProcedureUnavailable();
        }
    }

    private static String host(RpcCall call) {
        InetAddress a = Access.client(call);
        return a == null ? "?" : a.getHostAddress();
    }

    private void mnt(RpcCall call) throws OncRpcException, IOException {
        String path = Wire.args(call, in -> in.xdrDecodeString());
        if (!Access.allowed(call, allow)) {
            Wire.reply(call, out -> out.xdrEncodeInt(MNT3ERR_ACCES));
            return;
        }
        int status;
        FileHandle fh = FileHandle.ROOT;
        try {
            status = MNT3_OK;
            Node n = handles.resolve(fh);
            for (String part : path.split("/")) {
                if (part.isEmpty() || part.equals(".")) {
                    continue;
                }
                if (!(n instanceof DirNode d)) {
                    status = MNT3ERR_NOTDIR;
                    break;
                }
                Node child = d.child(part);
                if (child == null) {
                    status = MNT3ERR_NOENT;
                    break;
                }
                fh = handles.child(fh, child);
                n = child;
            }
            if (status == MNT3_OK && !(n instanceof DirNode)) {
                status = MNT3ERR_NOTDIR;
            }
        } catch (RuntimeException e) {
            status = MNT3ERR_IO;
        }
        int st = status;
        FileHandle h = fh;
        if (st == MNT3_OK) {
            mounted.add(new Mounted(host(call), path));
        }
        Wire.reply(call, out -> {
            out.xdrEncodeInt(st);
            if (st == MNT3_OK) {
                Wire.handle(out, h);
                out.xdrEncodeInt(1);              // auth_flavors<>
                out.xdrEncodeInt(AUTH_UNIX);
            }
        });
    }
}
