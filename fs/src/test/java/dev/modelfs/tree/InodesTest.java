package dev.modelfs.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import org.junit.jupiter.api.Test;

/** Inode numbers: SHA-256's first 63 bits, never the root's, one per blob whatever the digest's case. */
class InodesTest {
    static long top63(String s) throws Exception {
        byte[] h = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        return ByteBuffer.wrap(h).getLong() & Long.MAX_VALUE;
    }

    @Test
    void theTop63BitsOfTheIdentitysDigest() throws Exception {
        for (String id : new String[] {"a", "model:config.json", "é"}) {
            long v = top63(id);
            assertEquals(v < 2 ? v + 2 : v, Inodes.of(id), id);
            assertTrue(Inodes.of(id) > Inodes.ROOT);
        }
    }

    @Test
    void aBlobsInodeIgnoresTheDigestsCase() throws Exception {
        String hex = "AB".repeat(32);
        assertEquals(Inodes.ofBlob(hex.toLowerCase()), Inodes.ofBlob(hex));
        assertEquals(top63("blob:" + hex.toLowerCase()), Inodes.ofBlob(hex));
        assertNotEquals(Inodes.of(hex.toLowerCase()), Inodes.ofBlob(hex), "blob inodes are in their own namespace");
    }
}
