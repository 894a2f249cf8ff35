package dev.modelfs.quant.ggml;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.quant.BlockDequantizer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Once JIT-compiled, a call allocates nothing. The kernels take per-block {@code asSlice} views that
 * C2's escape analysis scalar-replaces; the interpreter and C1 do allocate them while warming up, so
 * the test calls every kernel until a call allocates 0 bytes (a regression that defeats escape analysis
 * would allocate on every block, for ever) and fails if one never gets there within the time limit.
 */
class GgmlAllocationTest {
    private static final int[] IDS = {0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
        22, 23, 28, 29, 30, 34, 35, 39, 40, 41, 42};
    private static final long LIMIT_NANOS = 60_000_000_000L;

    @Test
    void steadyStateCallsAllocateNothing() {
        final com.sun.management.ThreadMXBean mx =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported(), "no per-thread allocation counter");
        final List<String> jvmArgs = ManagementFactory.getRuntimeMXBean().getInputArguments();
        Assumptions.assumeFalse(jvmArgs.stream().anyMatch(a -> a.equals("-Xint") || a.startsWith("-XX:TieredStopAtLevel")
                || a.equals("-XX:-DoEscapeAnalysis") || a.equals("-XX:-UseCompiler")), "JVM without C2 escape analysis");
        mx.setThreadAllocatedMemoryEnabled(true);
        final Map<Integer, long[]> pending = new LinkedHashMap<>(); // id -> last allocation per call
        try (Arena arena = Arena.ofConfined()) {
            final List<Object[]> work = new ArrayList<>();
            final Random rnd = new Random(7);
            for (int id : IDS) {
                final BlockDequantizer k = GgmlDequantizers.forTypeId(id);
                final int blocks = Math.max(64, 2048 / k.blockElements());
                final byte[] data = new byte[blocks * k.blockBytes()];
                rnd.nextBytes(data);
                final MemorySegment src = arena.allocate(data.length);
                MemorySegment.copy(MemorySegment.ofArray(data), 0, src, 0, data.length);
                final MemorySegment dst = arena.allocate((long) blocks * k.blockElements() * 4);
                work.add(new Object[] {id, k, src, dst, (long) blocks});
                pending.put(id, new long[] {-1});
            }
            final long start = System.nanoTime();
            while (!pending.isEmpty() && System.nanoTime() - start < LIMIT_NANOS) {
                for (Object[] w : work) {
                    final int id = (Integer) w[0];
                    if (!pending.containsKey(id)) {
                        continue;
                    }
                    final BlockDequantizer k = (BlockDequantizer) w[1];
                    final MemorySegment src = (MemorySegment) w[2];
                    final MemorySegment dst = (MemorySegment) w[3];
                    final long blocks = (Long) w[4];
                    for (int i = 0; i < 50; i++) {
                        k.dequantize(src, 0, dst, 0, blocks);
                    }
                    final long before = mx.getCurrentThreadAllocatedBytes();
                    k.dequantize(src, 0, dst, 0, blocks);
                    final long allocated = mx.getCurrentThreadAllocatedBytes() - before;
                    if (allocated == 0) {
                        pending.remove(id);
                    } else {
                        pending.get(id)[0] = allocated;
                    }
                }
            }
        }
        final StringBuilder msg = new StringBuilder();
        pending.forEach((id, a) -> msg.append(String.format("%n  type %d: %d bytes per call", id, a[0])));
        assertTrue(pending.isEmpty(), "kernels still allocating after warm-up:" + msg);
    }
}
