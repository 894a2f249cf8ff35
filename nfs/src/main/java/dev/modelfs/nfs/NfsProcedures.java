package dev.modelfs.nfs;

/**
 * The names of the NFSv3 procedures (RFC 1813 §3), by procedure number: the labels of the NFS metrics.
 *
 * <p>Invariant: {@link #name} is the RFC's name for 0..{@code count() - 1} and {@code UNKNOWN} otherwise.
 */
public final class NfsProcedures {
    private static final String[] NAMES = {"NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ", "WRITE",
            "CREATE", "MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK", "READDIR", "READDIRPLUS", "FSSTAT",
            "FSINFO", "PATHCONF", "COMMIT"};

    private NfsProcedures() {}

    /** Number of procedures NFSv3 defines. */
    public static int count() {
        return NAMES.length;
    }

    public static String name(int procedure) {
        return procedure >= 0 && procedure < NAMES.length ? NAMES[procedure] : "UNKNOWN";
    }
}
