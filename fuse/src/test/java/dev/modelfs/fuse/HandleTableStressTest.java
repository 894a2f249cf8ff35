package dev.modelfs.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Handle numbers under concurrency: threads open, look up (lock-free) and release handles while the table
 * grows; a handle must show its own object for as long as it is open, and no live number is issued twice.
 */
class HandleTableStressTest {
    @Test
    void aLiveHandleAlwaysShowsItsOwnObject() throws Exception {
        HandleTable<Object> table = new HandleTable<>();
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            Thread th = new Thread(() -> {
                try {
                    start.await();
                    List<long[]> held = new ArrayList<>();
                    List<Object> objects = new ArrayList<>();
                    for (int r = 0; r < 20_000 && errors.isEmpty(); r++) {
                        Object o = new Object();
                        long h = table.add(o);
                        held.add(new long[] {h});
                        objects.add(o);
                        for (int i = 0; i < held.size(); i++) {
                            if (table.get(held.get(i)[0]) != objects.get(i)) {
                                errors.add("handle " + held.get(i)[0] + " shows another object");
                            }
                        }
                        if (held.size() > 8 || (r & 3) == 0) {          // release the oldest
                            long old = held.remove(0)[0];
                            Object was = objects.remove(0);
                            if (table.remove(old) != was) {
                                errors.add("remove(" + old + ") returned another object");
                            }
                        }
                    }
                    for (int i = 0; i < held.size(); i++) {
                        table.remove(held.get(i)[0]);
                    }
                } catch (InterruptedException | RuntimeException e) {
                    errors.add(e.toString());
                }
            });
            threads.add(th);
            th.start();
        }
        start.countDown();
        for (Thread th : threads) {
            th.join(TimeUnit.SECONDS.toMillis(60));
            assertTrue(!th.isAlive());
        }
        assertTrue(errors.isEmpty(), errors.size() + " errors, first: " + errors.peek());
        assertEquals(0, table.size(), "every handle released");
    }
}
