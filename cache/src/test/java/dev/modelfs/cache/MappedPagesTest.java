package dev.modelfs.cache;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Pages of a file mapping brought in from native code: resident when readable, refused (not thrown) when not. */
class MappedPagesTest {
    @TempDir
    Path dir;

    @Test
    void aReadableRangeIsPopulatedAndAnUnreadableOneRefusedWithoutAFault() throws IOException {
        Path f = Files.write(dir.resolve("blob"), new byte[64 << 10]);
        try (Arena arena = Arena.ofConfined(); FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            MemorySegment seg = ch.map(FileChannel.MapMode.READ_ONLY, 0, 64 << 10, arena);
            assertTrue(MappedPages.populate(seg, 0, seg.byteSize()), "the whole readable mapping");
            assertTrue(MappedPages.populate(seg, 5000, 9000), "a range that starts inside a page");
            assertTrue(MappedPages.populate(seg, 100, 100), "an empty range");
            try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
                raf.setLength(4096);                              // the blob shrank under its mapping
            }
            assertTrue(MappedPages.populate(seg, 0, 4096), "what is left");
            assertFalse(MappedPages.populate(seg, 0, seg.byteSize()), "pages past the end would raise SIGBUS: refused");
        }
        assertTrue(MappedPages.populate(MemorySegment.ofArray(new byte[16]), 0, 16), "not a mapping: nothing to do");
    }
}
