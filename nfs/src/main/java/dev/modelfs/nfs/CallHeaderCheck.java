package dev.modelfs.nfs;

import org.glassfish.grizzly.Buffer;

/**
 * Checks the fixed part of an RPC call record (RFC 5531 §9) before anything in it is decoded into
 * objects: the message type, the credential and the verifier. oncrpc4j's decoder allocates whatever a
 * length field claims (an AUTH_SYS gid count of 0x7ffffff0 is an 8 GiB {@code int[]}), so no record
 * reaches it without passing here.
 *
 * <p>Invariants: reads only within {@code [position, limit)} of the record, allocates nothing, never
 * throws; a record is {@link Verdict#CALL} only when it is a call whose credential is AUTH_NONE (empty)
 * or AUTH_SYS with a body of at most {@link #MAX_AUTH_BYTES} bytes inside the record, a machine name of
 * at most {@link #MAX_MACHINE_NAME} bytes, at most {@link #MAX_GIDS} gids and exactly the length it
 * declares, and whose verifier is an empty AUTH_NONE (the only flavors this server speaks: RPCSEC_GSS
 * and AUTH_TLS, whose decoding oncrpc4j would start, are refused here).
 */
final class CallHeaderCheck {
    /** RFC 5531: "opaque_auth ... body<400>". */
    static final int MAX_AUTH_BYTES = 400;
    /** RFC 5531 appendix A: {@code string machinename<255>; unsigned int gids<16>}. */
    static final int MAX_MACHINE_NAME = 255;
    static final int MAX_GIDS = 16;
    private static final int CALL = 0, AUTH_NONE = 0, AUTH_SYS = 1;

    /** What to do with a record. */
    enum Verdict {
        /** A call with sane credentials: decode and dispatch it. */
        CALL,
        /** Not a call (a reply, or too short to say): drop it silently. */
        DROP,
        /** A call whose credential or verifier is malformed, too large or of another flavor: answer AUTH_BADCRED. */
        BAD_CREDENTIAL
    }

    private CallHeaderCheck() {}

    static Verdict check(Buffer record) {
        int p = record.position();
        int end = record.limit();
        if (end - p < 24 || record.getInt(p + 4) != CALL) {     // xid, type, rpcvers, prog, vers, proc
            return Verdict.DROP;
        }
        p += 24;
        int cred = authEnd(record, p, end);
        int flavor = cred < 0 ? -1 : record.getInt(p);
        if (flavor == AUTH_NONE ? cred != p + 8 : flavor != AUTH_SYS || !authSysBodyIsSane(record, p + 8, cred)) {
            return Verdict.BAD_CREDENTIAL;
        }
        int verifier = authEnd(record, cred, end);
        return verifier != cred + 8 || record.getInt(cred) != AUTH_NONE ? Verdict.BAD_CREDENTIAL : Verdict.CALL;
    }

    /** The end of the opaque_auth at {@code p} (flavor, length, padded body), or -1 when it is not sane. */
    private static int authEnd(Buffer b, int p, int end) {
        if (end - p < 8) {
            return -1;
        }
        int len = b.getInt(p + 4);
        if (len < 0 || len > MAX_AUTH_BYTES) {
            return -1;
        }
        int padded = (len + 3) & ~3;
        return end - (p + 8) < padded ? -1 : p + 8 + padded;
    }

    /** authsys_parms: stamp, machinename, uid, gid, gids; must fill the body exactly. */
    private static boolean authSysBodyIsSane(Buffer b, int p, int bodyEnd) {
        if (bodyEnd - p < 8) {
            return false;
        }
        int nameLen = b.getInt(p + 4);
        if (nameLen < 0 || nameLen > MAX_MACHINE_NAME) {
            return false;
        }
        p += 8 + ((nameLen + 3) & ~3);
        if (bodyEnd - p < 12) {                                     // uid, gid, gid count
            return false;
        }
        int gids = b.getInt(p + 8);
        if (gids < 0 || gids > MAX_GIDS) {
            return false;
        }
        return p + 12 + 4 * gids == bodyEnd;
    }
}
