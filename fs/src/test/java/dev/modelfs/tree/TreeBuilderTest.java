package dev.modelfs.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.ByteSource;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.SortedMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Placing files in a model directory: unsafe and colliding paths are left out, folders appear with stable inodes. */
class TreeBuilderTest {
    private static FileNode file(long inode) {
        return new FileNode(inode, 5, ByteSource.literal(new byte[] {1}), Map.of());
    }

    @Test
    void unsafePathsAreRefusedAndTheFirstClaimWins() {
        TreeBuilder b = new TreeBuilder("abc", 7);
        FileNode first = file(10);
        assertTrue(b.put("text_encoder/model.safetensors", first));
        assertFalse(b.put("text_encoder/model.safetensors", file(11)), "name taken");
        assertFalse(b.put("text_encoder/model.safetensors/x", file(12)), "a file is in the way");
        for (String bad : new String[] {"/abs", "a/../b", "./a", "a//b", "", "a\0b", "x".repeat(256)}) {
            assertFalse(b.put(bad, file(13)), "unsafe: " + bad.length());
            assertNull(TreeBuilder.safeComponents(bad));
        }
        SortedMap<String, Node> root = b.build();
        DirNode dir = assertInstanceOf(DirNode.class, root.get("text_encoder"));
        assertSame(first, dir.child("model.safetensors"));
        assertEquals(7, dir.mtimeNanos());
        assertEquals(Inodes.of("abc:dir:text_encoder"), dir.inode());
        assertEquals(1, root.size());
    }

    @Test
    void replaceSwapsAPlacedFileAndReturnsTheOldOne() {
        TreeBuilder b = new TreeBuilder("abc", 7);
        FileNode stored = file(20);
        assertTrue(b.put("model.gguf", stored));
        FileNode translated = file(21);
        assertSame(stored, b.replace("model.gguf", translated));
        assertNull(b.replace("mmproj.gguf", file(22)), "nothing to replace: nothing placed");
        assertNull(b.replace("../model.gguf", file(23)));
        assertTrue(b.put("ollama/model.gguf", stored));
        SortedMap<String, Node> root = b.build();
        assertEquals(21, ((FileNode) root.get("model.gguf")).inode());
        assertFalse(root.containsKey("mmproj.gguf"));
        assertSame(stored, ((DirNode) root.get("ollama")).child("model.gguf"));
    }

    /** Inodes are the first 63 bits of SHA-256 of the identity (computed here with the JDK's digest), never 0 or 1. */
    @Test
    void inodesAreTheTopBitsOfTheIdentitysSha256() throws Exception {
        byte[] h = MessageDigest.getInstance("SHA-256").digest("blob:ab".getBytes(StandardCharsets.UTF_8));
        long want = new BigInteger(1, java.util.Arrays.copyOf(h, 8)).longValue() & Long.MAX_VALUE;
        assertEquals(want < 2 ? want + 2 : want, Inodes.ofBlob("AB"));
        for (int i = 0; i < 1000; i++) {
            assertTrue(Inodes.of("x" + i) >= 2);
        }
    }

    @Test
    void aDirectoryListsItsChildrenOnceOnFirstUse() {
        AtomicInteger loads = new AtomicInteger();
        DirNode d = new DirNode(3, 0, () -> {
            loads.incrementAndGet();
            return new TreeMap<>(Map.of("a", file(20)));
        });
        assertEquals(0, loads.get(), "nothing is listed until asked");
        assertInstanceOf(FileNode.class, d.child("a"));
        assertEquals(1, d.children().size());
        assertEquals(1, loads.get());
    }
}
