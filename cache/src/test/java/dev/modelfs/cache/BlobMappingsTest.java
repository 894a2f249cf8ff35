package dev.modelfs.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BlobMappingsTest {
    @TempDir
    Path dir;

    Path file(String name, byte[] content) throws IOException {
        return Files.write(dir.resolve(name), content);
    }

    @Test
    void oneSharedMappingPerKeyKeptIdleUpToTheLimit() throws IOException {
        Path a = file("a", new byte[] {1, 2, 3});
        Path b = file("b", new byte[] {4});
        Path c = file("c", new byte[] {5});
        try (BlobMappings m = new BlobMappings(1)) {
            BlobLease l1 = m.acquire("a", a, 3);
            BlobLease l2 = m.acquire("a", a, 3);
            assertSame(l1.segment(), l2.segment());
            assertEquals(1, m.mappedCount());
            l1.close();
            l1.close();                       // idempotent
            assertEquals(3, l2.segment().get(ValueLayout.JAVA_BYTE, 2));
            l2.close();
            assertEquals(1, m.mappedCount(), "idle mapping kept");
            m.acquire("b", b, 1).close();
            assertEquals(1, m.mappedCount(), "oldest idle mapping evicted beyond maxIdle");
            BlobLease lc = m.acquire("c", c, 1);
            m.acquire("a", a, 3).close();
            assertEquals(2, m.mappedCount(), "leased mappings are never evicted");
            assertEquals(5, lc.segment().get(ValueLayout.JAVA_BYTE, 0));
            lc.close();
        }
    }

    @Test
    void aMappingWhoseReadFaultedIsNotReusedButStaysMappedForItsLeases() throws IOException {
        Path a = file("a", new byte[] {1, 2, 3});
        try (BlobMappings m = new BlobMappings(4)) {
            BlobLease faulted = m.acquire("a", a, 3);
            faulted.retireMapping();                      // a read of it faulted (SEMANTICS.md "When the store's disk fails")
            BlobLease fresh = m.acquire("a", a, 3);       // the same file at the same size: mapped afresh all the same
            assertNotSame(faulted.segment(), fresh.segment());
            assertEquals(3, faulted.segment().get(ValueLayout.JAVA_BYTE, 2), "the old lease keeps its mapping");
            faulted.close();
            assertEquals(1, m.mappedCount());
            fresh.retireMapping();
            fresh.close();
            assertEquals(0, m.mappedCount(), "a retired mapping is unmapped with its last lease, not kept idle");
        }
    }

    @Test
    void sizeIsCheckedBeforeMapping() throws IOException {
        Path a = file("a", new byte[10]);
        try (BlobMappings m = new BlobMappings(4)) {
            assertThrows(BlobSizeMismatchException.class, () -> m.acquire("a", a, 11));
            assertThrows(NoSuchFileException.class, () -> m.acquire("x", dir.resolve("missing"), 1));
            assertEquals(0, m.mappedCount());
        }
    }

    @Test
    void preadReadsIntoNativeMemoryAndStopsAtEof() throws IOException {
        byte[] content = new byte[100_000];
        new Random(5).nextBytes(content);
        Path a = file("a", content);
        try (NativeFile f = new NativeFile(a); Arena arena = Arena.ofConfined()) {
            MemorySegment dst = arena.allocate(70_000);
            assertEquals(60_000, f.pread(dst, 10_000, 60_000, 40_000));
            byte[] got = new byte[60_000];
            MemorySegment.copy(dst, ValueLayout.JAVA_BYTE, 10_000, got, 0, got.length);
            assertArrayEquals(java.util.Arrays.copyOfRange(content, 40_000, 100_000), got);
            assertEquals(0, f.pread(dst, 0, 10, 100_000));
            assertEquals(5, f.pread(dst, 0, 10, 99_995));
            assertThrows(IllegalArgumentException.class, () -> f.pread(MemorySegment.ofArray(new byte[4]), 0, 4, 0));
            f.close();
            assertThrows(IOException.class, () -> f.pread(dst, 0, 1, 0));
        }
    }
}
