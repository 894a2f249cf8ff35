package dev.modelfs.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * The parts of {@link FuseRing} that need no kernel: which queue each of a thread's entries is on, and the kernel's
 * CPU lists (its queue count). The rings themselves are tested on a real mount ({@code FuseIoUringTest}).
 */
class FuseRingTest {
    @Test
    void aThreadHasItsHomeEntriesOnItsOwnCpusQueueAndOneOnTheNext() {
        assertArrayEquals(new int[] {0, 0, 1}, FuseRing.entryQueues(0, 2, 2, 2));
        assertArrayEquals(new int[] {1, 1, 0}, FuseRing.entryQueues(1, 2, 2, 2));
        assertArrayEquals(new int[] {2, 2, 3}, FuseRing.entryQueues(2, 4, 4, 2));
        assertArrayEquals(new int[] {0, 0}, FuseRing.entryQueues(0, 1, 1, 2), "one CPU: the home entries only");
        assertArrayEquals(new int[] {1, 1, 3, 5, 7, 2}, FuseRing.entryQueues(1, 2, 8, 2),
                "two threads on eight CPUs: thread 1 also takes the queues of CPUs 3, 5 and 7");
        assertArrayEquals(new int[] {1, 1, 0}, FuseRing.entryQueues(3, 4, 2, 2), "more threads than CPUs share a CPU");
    }

    @Test
    void everyQueueHasAnEntryAndNoThreadHasOneOnEveryQueue() {
        for (int threads = 1; threads <= 9; threads++) {
            for (int queues = 1; queues <= 70; queues++) {
                int[] perQueue = new int[queues];
                for (int t = 0; t < threads; t++) {
                    int[] entries = FuseRing.entryQueues(t, threads, queues, 2);
                    assertTrue(entries.length <= 2 + (queues + threads - 1) / threads + 1,
                            threads + " threads, " + queues + " queues: thread " + t + " has " + entries.length + " entries");
                    for (int q : entries) {
                        perQueue[q]++;
                    }
                }
                for (int q = 0; q < queues; q++) {
                    assertTrue(perQueue[q] >= 1, threads + " threads, " + queues + " queues: queue " + q + " has no entry");
                }
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
