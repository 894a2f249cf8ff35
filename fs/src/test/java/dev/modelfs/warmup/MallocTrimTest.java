package dev.modelfs.warmup;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class MallocTrimTest {
    @Test
    void freedCHeapOfAnotherThreadGoesBackToTheKernel() throws Exception {
        Thread t = Thread.ofPlatform().start(() -> {                // its own malloc arena, as a warm-up pass's thread
            try (Arena a = Arena.ofConfined()) {
                for (int i = 0; i < 96 * 1024; i++) {
                    MemorySegment s = a.allocate(1000);             // below the mmap threshold: from the arena's heap
                    s.fill((byte) 1);
                }
            }
        });
        t.join();
        long before = rssAnonKiB();
        assertTrue(MallocTrim.trim(), "this is glibc: malloc_trim exists");
        long after = rssAnonKiB();
        assertTrue(after < before - 32 * 1024, "96 MiB freed in another thread's arena, RssAnon " + before + " -> " + after + " KiB");
    }

    private static long rssAnonKiB() throws Exception {
        for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (l.startsWith("RssAnon:")) {
                return Long.parseLong(l.replaceAll("[^0-9]", ""));
            }
        }
        throw new IllegalStateException("no RssAnon");
    }
}
