package dev.modelfs.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.HeapCharge;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The per-model and total limits of {@link MemoryBudget} in bytes, what releasing gives back, and reservations racing. */
class MemoryBudgetTest {
    @Test
    void aModelOverItsOwnLimitReservesNothing() throws Exception {
        MemoryBudget b = new MemoryBudget(100, 1000);
        MemoryBudget.Account a = b.account();
        a.reserve(60, "sixty");
        MemoryBudget.OverBudget e = assertThrows(MemoryBudget.OverBudget.class, () -> a.reserve(41, "41 more"));
        assertTrue(e.getMessage().contains("over the per-model memory budget: 41 more (41 bytes, 60 held), at most 100 bytes"), e.getMessage());
        assertEquals(60, a.held());
        assertEquals(60, b.used());
        a.reserve(40, "the rest");
        assertEquals(100, b.used());
    }

    @Test
    void theTotalIsSharedAndReleasedModelsGiveTheirShareBack() throws Exception {
        MemoryBudget b = new MemoryBudget(100, 250);
        MemoryBudget.Account x = b.account();
        MemoryBudget.Account y = b.account();
        MemoryBudget.Account z = b.account();
        x.reserve(100, "x");
        y.reserve(100, "y");
        MemoryBudget.OverBudget e = assertThrows(MemoryBudget.OverBudget.class, () -> z.reserve(51, "z"));
        assertTrue(e.getMessage().contains("over the mount's memory budget: z (51 bytes), 200 of 250 bytes"), e.getMessage());
        assertEquals(200, b.used());
        assertEquals(0, z.held());
        x.release();
        assertEquals(100, b.used());
        z.reserve(51, "z");
        assertEquals(151, b.used());
        assertThrows(MemoryBudget.OverBudget.class, () -> x.reserve(1, "x"), "a released account reserves nothing again");
        z.clear();
        assertEquals(100, b.used());
        z.reserve(100, "z");                                    // a rebuild starts from nothing
        assertEquals(200, b.used());
    }

    @Test
    void tensorsCostTheirMeasuredShareAndHostileCountsNeverOverflow() throws Exception {
        MemoryBudget b = new MemoryBudget(10 * MemoryBudget.TENSOR_BYTES, 1L << 40);
        MemoryBudget.Account a = b.account();
        a.reserveTensors(10);
        assertEquals(10 * MemoryBudget.TENSOR_BYTES, a.held());
        a.clear();
        MemoryBudget.OverBudget e = assertThrows(MemoryBudget.OverBudget.class, () -> a.reserveTensors(1L << 62));
        assertTrue(e.getMessage().contains(Long.toString(1L << 62) + " tensors"), e.getMessage());
        assertThrows(MemoryBudget.OverBudget.class, () -> a.reserve(-1, "a negative figure"));
        assertThrows(MemoryBudget.OverBudget.class, () -> a.reserve(Long.MAX_VALUE, "everything"));
        assertEquals(0, b.used());
    }

    @Test
    void chargesAreFormatExceptionsForParsersAndExceededForDirectories() throws Exception {
        MemoryBudget b = new MemoryBudget(100, 1000);
        MemoryBudget.Account a = b.account();
        HeapCharge parser = a.asCharge("GGUF metadata");
        parser.charge(70);
        FormatException f = assertThrows(FormatException.class, () -> parser.charge(31));
        assertTrue(f.getMessage().contains("per-model memory budget: GGUF metadata (31 bytes, 70 held)"), f.getMessage());
        HeapCharge dir = a.asDirectoryCharge();
        dir.charge(30);
        MemoryBudget.Exceeded x = assertThrows(MemoryBudget.Exceeded.class, () -> dir.charge(1));
        assertTrue(x.getMessage().contains("per-model memory budget"), x.getMessage());
        assertEquals(100, b.used());
    }

    /**
     * Threads reserve and give back at random on shared accounts: a checker samples the total all along and
     * fails if it ever exceeds the limit, and at the end the total must equal what the accounts hold.
     */
    @Test
    void concurrentReservationsNeverExceedTheTotal() throws Exception {
        long total = 10_000;
        MemoryBudget b = new MemoryBudget(3_000, total);
        int threads = 8;
        List<MemoryBudget.Account> accounts = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            accounts.add(b.account());
        }
        AtomicLong maxSeen = new AtomicLong();
        AtomicLong refusals = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        long deadline = System.nanoTime() + 1_500_000_000L;
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            ts.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    ThreadLocalRandom r = ThreadLocalRandom.current();
                    while (System.nanoTime() < deadline) {
                        MemoryBudget.Account a = accounts.get(r.nextInt(accounts.size()));
                        if (r.nextInt(8) == 0) {
                            a.clear();
                        } else {
                            try {
                                a.reserve(1 + r.nextInt(700), "racing");
                            } catch (MemoryBudget.OverBudget e) {
                                refusals.incrementAndGet();
                            }
                        }
                        maxSeen.accumulateAndGet(b.used(), Math::max);
                    }
                } catch (Throwable e) {
                    failure.set(e);
                }
            }));
        }
        Thread checker = Thread.ofPlatform().start(() -> {
            while (System.nanoTime() < deadline) {
                maxSeen.accumulateAndGet(b.used(), Math::max);
            }
        });
        start.await();
        for (Thread t : ts) {
            t.join();
        }
        checker.join();
        assertEquals(null, failure.get());
        assertTrue(maxSeen.get() <= total, "the total went up to " + maxSeen.get() + " of " + total);
        assertTrue(refusals.get() > 0, "the limits were reached");
        long held = 0;
        for (MemoryBudget.Account a : accounts) {
            assertTrue(a.held() <= 3_000, "an account holds " + a.held());
            held += a.held();
        }
        assertEquals(held, b.used(), "the total is what the accounts hold");
    }
}
