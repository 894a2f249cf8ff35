package dev.modelfs.nfs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class FileHandleTest {
    @Test
    void encodesToSeventeenBytesAndBack() {
        FileHandle h = new FileHandle(0x0123456789abcdefL, Long.MAX_VALUE);
        byte[] b = h.encode();
        assertEquals(17, b.length);
        assertEquals(1, b[0]);
        assertArrayEquals(new byte[] {0x01, 0x23, 0x45, 0x67, (byte) 0x89, (byte) 0xab, (byte) 0xcd, (byte) 0xef},
                java.util.Arrays.copyOfRange(b, 1, 9), "big-endian model inode after the version byte");
        assertEquals(h, FileHandle.decode(b));
        assertEquals(FileHandle.ROOT, FileHandle.decode(FileHandle.ROOT.encode()));
    }

    @Test
    void foreignBytesAreNotHandles() {
        assertNull(FileHandle.decode(new byte[0]));
        assertNull(FileHandle.decode(new byte[16]));
        assertNull(FileHandle.decode(new byte[18]));
        byte[] wrongVersion = FileHandle.ROOT.encode();
        wrongVersion[0] = 2;
        assertNull(FileHandle.decode(wrongVersion));
    }
}
