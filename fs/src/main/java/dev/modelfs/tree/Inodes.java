package dev.modelfs.tree;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Stable inode numbers: the first 63 bits of SHA-256 of an identity string.
 *
 * <p>Invariants: deterministic across runs and mounts; never 0 or 1 (1 is the root); collisions
 * are as unlikely as 63-bit hash collisions.
 */
public final class Inodes {
    public static final long ROOT = 1;

    private Inodes() {}

    public static long of(String identity) {
        byte[] h;
        try {
            h = MessageDigest.getInstance("SHA-256").digest(identity.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (h[i] & 0xff);
        }
        v &= Long.MAX_VALUE;
        return v < 2 ? v + 2 : v;
    }

    /** Inode of a file that is exactly one blob: shared by every path showing that blob. */
    public static long ofBlob(String digestHex) {
        return of("blob:" + digestHex.toLowerCase(java.util.Locale.ROOT));
    }
}
