package dev.modelfs.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * The parts of {@link FuseRing} that need no kernel: which queue each of a thread's entries is on, and the kernel's
 * CPU lists (its queue count). The rings themselves are tested on a real mount ({@code FuseIoUringTest}).
 */
class FuseRingTest {
    @Test
    void aThreadHasItsHomeEntriesOnItsOwnCpusQueueAndOneOnEveryOther() {
        assertArrayEquals(new int[] {0, 0, 1}, FuseRing.entryQueues(0, 2, 2));
        assertArrayEquals(new int[] {1, 1, 0}, FuseRing.entryQueues(1, 2, 2));
        assertArrayEquals(new int[] {2, 2, 0, 1, 3}, FuseRing.entryQueues(2, 4, 2));
        assertArrayEquals(new int[] {0}, FuseRing.entryQueues(0, 1, 1), "one CPU: the home entries only");
    }

    @Test
    void everyQueueGetsAnEntryFromAnyNumberOfThreads() {
        for (int queues = 1; queues <= 6; queues++) {
            int[] perQueue = new int[queues];
            for (int q : FuseRing.entryQueues(0, queues, 2)) {
                perQueue[q]++;                                  // one thread alone must cover every queue
            }
            for (int q = 0; q < queues; q++) {
                assertEquals(q == 0 ? 2 : 1, perQueue[q], "queue " + q + " of " + queues);
            }
        }
    }

    @Test
    void aCpuListCountsUpToItsHighestCpu() throws IOException {
        assertEquals(2, FuseRing.cpuCount("0-1\n"));
        assertEquals(1, FuseRing.cpuCount("0"));
        assertEquals(8, FuseRing.cpuCount("0,2-3,7"));
        assertEquals(4096, FuseRing.cpuCount("0-4095"));
    }

    @Test
    void aMalformedCpuListIsRefused() {
        for (String bad : new String[] {"", "a-b", "0-1-2", "0-4096", "-1", "0,"}) {
            assertThrows(IOException.class, () -> FuseRing.cpuCount(bad), bad);
        }
    }
}
