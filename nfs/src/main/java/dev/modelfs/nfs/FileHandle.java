package dev.modelfs.nfs;

import dev.modelfs.tree.Inodes;

/**
 * An NFS file handle: 17 bytes, a version byte then the stable inode of the model directory the
 * node lies in (0 above the models) and the node's own stable inode ({@link Inodes}).
 *
 * <p>Invariants: the bytes are a pure function of store content and path (manifest digest and
 * name, path inside the model), never of the server process, so a handle outlives restarts and is
 * valid on any server over the same store; {@link #decode} accepts exactly what {@link #encode}
 * produces and nothing else.
 */
public record FileHandle(long model, long path) {
    static final byte VERSION = 1;
    static final int LENGTH = 17;
    /** The export's root directory. */
    public static final FileHandle ROOT = new FileHandle(0, Inodes.ROOT);

    public byte[] encode() {
        byte[] b = new byte[LENGTH];
        b[0] = VERSION;
        putLong(b, 1, model);
        putLong(b, 9, path);
        return b;
    }

    /** The handle {@code b} encodes, or null when it is not one of ours (a BADHANDLE). */
    public static FileHandle decode(byte[] b) {
        if (b == null || b.length != LENGTH || b[0] != VERSION) {
            return null;
        }
        return new FileHandle(getLong(b, 1), getLong(b, 9));
    }

    private static void putLong(byte[] b, int at, long v) {
        for (int i = 7; i >= 0; i--) {
            b[at + i] = (byte) v;
            v >>>= 8;
        }
    }

    private static long getLong(byte[] b, int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[at + i] & 0xff);
        }
        return v;
    }
}
