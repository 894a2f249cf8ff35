package dev.modelfs.warmup;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import org.junit.jupiter.api.Test;

/**
 * Asks the kernel, page by page ({@code mincore}), whether the C heap a finished thread freed is still resident,
 * rather than reading the process's RSS: the JVM's own arenas, code cache and GC move RSS by tens of MiB between two
 * reads (CI saw 126 -> 111 MiB across a trim, this machine 117 -> 63 MiB across no trim at all).
 */
class MallocTrimTest {
    private static final int BLOCKS = 96 * 1024;
    private static final int SAMPLES = 200;
    private static final long PAGE = 4096;
    private static final long PIN = 100_000;          // below the mmap threshold (128 KiB)
    private static final MethodHandle MINCORE = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("mincore").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));

    /**
     * A warm-up thread frees many small blocks while one later block stays live above them, so glibc's automatic
     * trim (which only shrinks a heap from its top) cannot return them: only {@code malloc_trim} can.
     */
    @Test
    void freedCHeapOfAnotherThreadGoesBackToTheKernel() throws Throwable {
        long[] sampled = new long[SAMPLES];
        try (Arena pin = Arena.ofShared(); Arena scratch = Arena.ofConfined()) {
            Thread t = Thread.ofPlatform().start(() -> {            // its own malloc arena, as a warm-up pass's thread
                try (Arena small = Arena.ofConfined()) {
                    for (int i = 0; i < BLOCKS; i++) {
                        MemorySegment s = small.allocate(1000);     // below the mmap threshold: from the arena's heap
                        s.fill((byte) 1);
                        int stride = BLOCKS / (SAMPLES + 2);
                        if (i % stride == 0 && i / stride >= 1 && i / stride <= SAMPLES) {
                            sampled[i / stride - 1] = (s.address() + PAGE) & -PAGE;   // a page wholly inside freed space
                        }
                    }
                    pin.allocate(PIN).fill((byte) 2);                // above them in the same heap, still live: too big
                                                                      // for any hole the loop may have left
                }
            });
            t.join();
            MemorySegment vec = scratch.allocate(1);
            int before = resident(sampled, vec);
            assertTrue(before >= SAMPLES * 9 / 10, "freed but untrimmed pages stay resident: " + before + "/" + SAMPLES);
            assertTrue(MallocTrim.trim(), "this is glibc: malloc_trim exists");
            int after = resident(sampled, vec);
            assertTrue(after <= SAMPLES / 10, "after the trim, resident freed pages: " + after + "/" + SAMPLES);
        }
    }

    private static int resident(long[] pages, MemorySegment vec) throws Throwable {
        int n = 0;
        for (long p : pages) {
            int rc = (int) MINCORE.invokeExact(MemorySegment.ofAddress(p), PAGE, vec);
            n += rc == 0 ? vec.get(ValueLayout.JAVA_BYTE, 0) & 1 : 0;      // ENOMEM: unmapped, not resident
        }
        return n;
    }
}
