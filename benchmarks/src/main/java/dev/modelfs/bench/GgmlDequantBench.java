package dev.modelfs.bench;

import dev.modelfs.format.LittleEndian;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.quant.BlockDequantizer;
import dev.modelfs.quant.Kernels;
import dev.modelfs.quant.ggml.GgmlDequantizers;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
 * Single-thread throughput of the GGML dequantizers, scalar loops against Vector API kernels: each invocation turns
 * random blocks (with realistic f16 scales) into {@code outBytes} of f32 output in a native segment: 16 MiB (memory
 * bound on a small VM) and 128 KiB (one FUSE read; source and output stay in L2). The source is native memory or a
 * file mapped read-only (as the real read path sees blobs), in its own fork per combination; {@code mixed} first
 * runs the kernel on heap, native and mapped sources (as the tests do) so its JIT profiles have seen all three, then
 * measures the mapped source.
 *
 * <p>Run from the repository root (JDK 25):
 * <pre>
 * mvn -q -pl benchmarks -am compile dependency:build-classpath -Dmdep.outputFile=target/bench.cp
 * java --add-modules jdk.incubator.vector -cp benchmarks/target/classes:$(cat benchmarks/target/bench.cp) \
 *     dev.modelfs.bench.GgmlDequantBench [types...]
 * </pre>
 * (types default to Q4_0 Q8_0 Q4_K Q6_K; also Q4_1, Q5_0, Q5_K, IQ4_NL, F16, BF16).
 * {@link #main} runs 1 fork, 5 warmup + 3 measurement iterations of 1 s (the Vector API kernels need a few seconds of
 * C2 before they reach their speed; the interpreter and C1 run them 100x slower) and prints GB/s
 * (10^9 bytes of f32 output per second) next to JMH's ns/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 3, time = 1)
public class GgmlDequantBench {
    @Param({"Q4_0", "Q8_0", "Q4_K", "Q6_K"})
    public String type;

    /** Kernel implementation ({@link Kernels.Impl}). */
    @Param({"SCALAR", "VECTOR"})
    public String impl;

    /** f32 output bytes per invocation: 16 MiB, and 128 KiB (in cache). */
    @Param({"16777216", "131072"})
    public long outBytes;

    /** Where the blocks are: {@code native}, {@code mapped} (a temporary file), {@code mixed} (see above). */
    @Param({"native", "mapped"})
    public String source;

    private Arena arena;
    private BlockDequantizer kernel;
    private MemorySegment src;
    private MemorySegment dst;
    private long blocks;
    private Path file;

    /** Byte offsets of the f16 scale fields of the benchmarked types. */
    static int[] f16Fields(String name) {
        return switch (name) {
            case "Q4_0", "Q8_0", "Q5_0", "IQ4_NL" -> new int[] {0};
            case "Q4_1", "Q4_K", "Q5_K" -> new int[] {0, 2};
            case "Q6_K" -> new int[] {208};
            case "F16", "BF16" -> new int[0];
            default -> throw new IllegalArgumentException(name);
        };
    }

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        kernel = GgmlDequantizers.forType(GgmlType.valueOf(type), Kernels.Impl.valueOf(impl));
        blocks = outBytes / (4L * kernel.blockElements());
        arena = Arena.ofShared();
        final MemorySegment blocksHere = arena.allocate(blocks * kernel.blockBytes(), 64);
        dst = arena.allocate(outBytes, 64);
        final Random rnd = new Random(1);
        final byte[] block = new byte[kernel.blockBytes()];
        for (long b = 0; b < blocks; b++) {
            rnd.nextBytes(block);
            final MemorySegment blk = blocksHere.asSlice(b * block.length, block.length);
            MemorySegment.copy(MemorySegment.ofArray(block), 0, blk, 0, block.length);
            for (int off : f16Fields(type)) {
                blk.set(LittleEndian.I16, off, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
            }
        }
        if (type.equals("F16") || type.equals("BF16")) { // plausible weights, no NaNs
            for (long i = 0; i < blocks; i++) {
                final float w = (float) (rnd.nextGaussian() * 0.05);
                blocksHere.set(LittleEndian.I16, 2 * i, type.equals("F16") ? Float.floatToFloat16(w)
                        : (short) (Float.floatToRawIntBits(w) >>> 16));
            }
        }
        switch (source) {
            case "native" -> src = blocksHere;
            case "mapped", "mixed" -> {
                src = mapped(blocksHere);
                if (source.equals("mixed")) {
                    pollute(blocksHere);
                }
            }
            default -> throw new IllegalArgumentException("source " + source);
        }
    }

    private MemorySegment mapped(MemorySegment content) throws IOException {
        file = Files.createTempFile("ggml-bench", ".bin");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            final java.nio.ByteBuffer buf = content.asByteBuffer();
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            return ch.map(FileChannel.MapMode.READ_ONLY, 0, content.byteSize(), arena);
        }
    }

    /** Runs the kernel on heap, native and mapped sources until C2 has compiled it with all three in its profiles. */
    private void pollute(MemorySegment nativeBlocks) {
        final int n = (int) Math.min(blocks, 64);
        final MemorySegment heap = MemorySegment.ofArray(nativeBlocks.asSlice(0, n * (long) kernel.blockBytes())
                .toArray(ValueLayout.JAVA_BYTE));
        final MemorySegment heapDst = MemorySegment.ofArray(new byte[n * kernel.blockElements() * 4]);
        for (int i = 0; i < 20_000; i++) {
            kernel.dequantize(heap, 0, heapDst, 0, n);
            kernel.dequantize(nativeBlocks, 0, dst, 0, n);
            kernel.dequantize(src, 0, dst, 0, n);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        arena.close();
        if (file != null) {
            Files.deleteIfExists(file);
        }
    }

    @Benchmark
    public MemorySegment dequantize() {
        kernel.dequantize(src, 0, dst, 0, blocks);
        return dst;
    }

    /** Arguments: GGML type names (default Q4_0 Q8_0 Q4_K Q6_K); {@code -Dbench.source=native,mapped,mixed}. */
    public static void main(String[] args) throws RunnerException {
        final String[] types = args.length > 0 ? args : new String[] {"Q4_0", "Q8_0", "Q4_K", "Q6_K"};
        final String[] sources = System.getProperty("bench.source", "native,mapped").split(",");
        final Options opt = new OptionsBuilder()
                .include(GgmlDequantBench.class.getName() + ".dequantize")
                .param("type", types)
                .param("source", sources)
                .forks(1)
                .warmupIterations(5).warmupTime(TimeValue.seconds(1))
                .measurementIterations(3).measurementTime(TimeValue.seconds(1))
                .build();
        final Collection<RunResult> results = new Runner(opt).run();
        System.out.println();
        System.out.println("GGML dequantization, 1 thread, GB/s of f32 output (GB = 10^9 bytes)");
        System.out.printf("%-6s %-7s %-7s %10s %12s %10s %10s%n", "type", "impl", "source", "out bytes", "ns/op", "GB/s",
                "GiB/s");
        for (RunResult r : results) {
            final double ns = r.getPrimaryResult().getScore();
            final long out = Long.parseLong(r.getParams().getParam("outBytes"));
            final double bytesPerSec = out / (ns * 1e-9);
            System.out.printf("%-6s %-7s %-7s %10d %12.0f %10.2f %10.2f%n", r.getParams().getParam("type"),
                    r.getParams().getParam("impl"), r.getParams().getParam("source"), out, ns, bytesPerSec / 1e9,
                    bytesPerSec / (1L << 30));
        }
    }
}
