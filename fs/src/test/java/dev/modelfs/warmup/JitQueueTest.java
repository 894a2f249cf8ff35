package dev.modelfs.warmup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class JitQueueTest {
    /** A report as {@code jcmd PID Compiler.queue} prints it on JDK 25 (taken from a run of the mount). */
    private static final String BUSY = """
            Current compiles:
            C2 CompilerThread0  4003   !   4       dev.modelfs.quant.mlx.MlxDequantizer::dequantize (527 bytes)
            C1 CompilerThread0  4017       3       dev.modelfs.convert.UnitSource$MlxGroups::outUnitBytes (15 bytes)

            C1 compile queue:
            4018       3       dev.modelfs.cache.ChunkCache$Key::hashCode (7 bytes)

            C2 compile queue:
            Empty

            """;
    private static final String IDLE = """
            Current compiles:

            C1 compile queue:
            Empty

            C2 compile queue:
            Empty

            """;

    @Test
    void countsRunningAndQueuedCompilesNotHeaders() {
        assertEquals(3, JitQueue.count(BUSY));
        assertEquals(0, JitQueue.count(IDLE));
    }

    @Test
    void thisJvmsCompilersGoIdleAndTheWaitIsBounded() throws Exception {
        assertTrue(JitQueue.awaitIdle(Duration.ofSeconds(30)), "an idle test JVM's compilers empty their queues");
        long t0 = System.nanoTime();
        JitQueue.awaitIdle(Duration.ZERO);
        assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "a zero wait returns at once");
        assertTrue(JitQueue.pending() >= 0);
    }

    @Test
    void settleRunsEachPassOnANewThreadUntilAPassCompilesNothing() throws Exception {
        JitQueue.awaitIdle(Duration.ofSeconds(30));
        List<Thread> threads = new ArrayList<>();
        int passes = JitQueue.settle(() -> threads.add(Thread.currentThread()), 10, Duration.ofSeconds(30));
        assertTrue(passes >= 1 && passes <= 10, "passes: " + passes);
        assertEquals(passes, threads.size());
        assertEquals(passes, new HashSet<>(threads).size(), "a new thread per pass");
        threads.forEach(t -> assertNotSame(Thread.currentThread(), t));
        assertTrue(passes < 10, "a pass that only records its thread leaves the compilers nothing to do: " + passes);
    }

    @Test
    void settleStopsAtItsPassLimitWhilePassesKeepTheCompilersBusy() throws Exception {
        int[] runs = {0};
        // each pass makes 20 fresh classes hot, so every pass compiles something, and enough of it to add to the
        // compilers' time, which the JVM reports in whole milliseconds (one small method's compiles can add none)
        int passes = JitQueue.settle(() -> {
            runs[0]++;
            for (int k = 0; k < 20; k++) {
                Runnable hot = newHotLoop();
                for (int i = 0; i < 20_000; i++) {
                    hot.run();
                }
            }
        }, 3, Duration.ofSeconds(60));
        assertEquals(3, passes);
        assertEquals(3, runs[0]);
        assertEquals(1, JitQueue.settle(() -> { }, 1, Duration.ofSeconds(5)), "at least one pass, at most the limit");
    }

    @Test
    void aFailingPassFailsTheSettle() {
        IllegalStateException boom = new IllegalStateException("boom");
        assertSame(boom, assertThrows(IllegalStateException.class, () -> JitQueue.settle(() -> { throw boom; }, 5, Duration.ofSeconds(5))));
        assertThrows(StackOverflowError.class, () -> JitQueue.settle(() -> { throw new StackOverflowError(); }, 5, Duration.ofSeconds(5)));
    }

    /** A new instance of a new hidden class copied from {@link SettleHotLoop}: code the JIT has never seen. */
    private static Runnable newHotLoop() {
        try (var in = JitQueueTest.class.getResourceAsStream("SettleHotLoop.class")) {
            var lookup = java.lang.invoke.MethodHandles.lookup();
            Class<?> c = lookup.defineHiddenClass(in.readAllBytes(), true).lookupClass();
            return (Runnable) lookup.findConstructor(c, java.lang.invoke.MethodType.methodType(void.class)).invoke();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}

/** A small loop for {@link JitQueueTest}: each test pass defines a hidden copy of it, which C1 and C2 compile afresh. */
final class SettleHotLoop implements Runnable {
    private long acc;

    SettleHotLoop() {
    }

    @Override
    public void run() {
        for (int i = 0; i < 50; i++) {
            acc += i * 31L ^ acc;
        }
    }
}
