package dev.modelfs.bench;

import dev.modelfs.format.LittleEndian;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.quant.BlockDequantizer;
import dev.modelfs.quant.ggml.GgmlDequantizers;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Collection;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Single-thread throughput of the GGML dequantizers: each invocation turns random blocks (with
 * realistic f16 scales) into 16 MiB of f32 output, off-heap to off-heap.
 *
 * <p>Run from the repository root (JDK 25):
 * <pre>
 * mvn -q -pl benchmarks -am compile dependency:build-classpath -Dmdep.outputFile=target/bench.cp
 * java -cp benchmarks/target/classes:$(cat benchmarks/target/bench.cp) dev.modelfs.bench.GgmlDequantBench [types...]
 * </pre>
 * (types default to Q4_0 Q8_0 Q4_K Q6_K; also Q4_1, Q5_0, Q5_K, IQ4_NL).
 * {@link #main} runs 1 fork, 2 warmup + 3 measurement iterations of 1 s and prints GB/s
 * (10^9 bytes of f32 output per second) next to JMH's ns/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class GgmlDequantBench {
    /** f32 output bytes per invocation. */
    public static final long OUT_BYTES = 16L << 20;

    @Param({"Q4_0", "Q8_0", "Q4_K", "Q6_K"})
    public String type;

    private Arena arena;
    private BlockDequantizer kernel;
    private MemorySegment src;
    private MemorySegment dst;
    private long blocks;

    /** Byte offsets of the f16 scale fields of the benchmarked types. */
    static int[] f16Fields(String name) {
        return switch (name) {
            case "Q4_0", "Q8_0", "Q5_0", "IQ4_NL" -> new int[] {0};
            case "Q4_1", "Q4_K", "Q5_K" -> new int[] {0, 2};
            case "Q6_K" -> new int[] {208};
            default -> throw new IllegalArgumentException(name);
        };
    }

    @Setup(Level.Trial)
    public void setUp() {
        kernel = GgmlDequantizers.forType(GgmlType.valueOf(type));
        blocks = OUT_BYTES / (4L * kernel.blockElements());
        arena = Arena.ofShared();
        src = arena.allocate(blocks * kernel.blockBytes(), 64);
        dst = arena.allocate(OUT_BYTES, 64);
        final Random rnd = new Random(1);
        final byte[] block = new byte[kernel.blockBytes()];
        for (long b = 0; b < blocks; b++) {
            rnd.nextBytes(block);
            final MemorySegment blk = src.asSlice(b * block.length, block.length);
            MemorySegment.copy(MemorySegment.ofArray(block), 0, blk, 0, block.length);
            for (int off : f16Fields(type)) {
                blk.set(LittleEndian.I16, off, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public MemorySegment dequantize() {
        kernel.dequantize(src, 0, dst, 0, blocks);
        return dst;
    }

    public static void main(String[] args) throws RunnerException {
        final String[] types = args.length > 0 ? args : new String[] {"Q4_0", "Q8_0", "Q4_K", "Q6_K"};
        final Options opt = new OptionsBuilder()
                .include(GgmlDequantBench.class.getName() + ".dequantize")
                .param("type", types)
                .forks(1)
                .warmupIterations(2).warmupTime(TimeValue.seconds(1))
                .measurementIterations(3).measurementTime(TimeValue.seconds(1))
                .build();
        final Collection<RunResult> results = new Runner(opt).run();
        System.out.println();
        System.out.println("GGML dequantization, 1 thread, 16 MiB f32 output per call (GB = 10^9 bytes)");
        System.out.printf("%-6s %12s %10s %10s%n", "type", "ns/op", "GB/s", "GiB/s");
        for (RunResult r : results) {
            final double ns = r.getPrimaryResult().getScore();
            final double bytesPerSec = OUT_BYTES / (ns * 1e-9);
            System.out.printf("%-6s %12.0f %10.2f %10.2f%n", r.getParams().getParam("type"), ns,
                    bytesPerSec / 1e9, bytesPerSec / (1L << 30));
        }
    }
}
