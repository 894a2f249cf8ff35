package dev.modelfs.warmup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
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
}
