package dev.modelfs.bench;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I16;

import dev.modelfs.quant.FloatCasts;
import dev.modelfs.quant.FloatFormat;
import dev.modelfs.quant.Kernels;
import dev.modelfs.quant.mlx.MlxDequantizer;
import dev.modelfs.quant.mlx.MlxQuant;
import dev.modelfs.quant.mlx.MlxRepack;
import dev.modelfs.quant.mlx.MlxTensorData;
import dev.modelfs.quant.mlx.ScaleType;
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

import java.io.IOException;
import java.io.UncheckedIOException;
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

/**
 * Single-thread throughput of the MLX dequantizers and the f32→bf16 cast. Every invocation produces 16 MiB of
 * f32 output (the cast reads 16 MiB of f32 and writes 8 MiB of bf16); a second run with 128 KiB (a FUSE read,
 * everything in L2) shows the kernels without the memory traffic. Each runs with the scalar and the Vector API
 * kernels ({@code impl}). Native (off-heap) segments, plus int4 from file mappings as blobs are served, to f32 and
 * to bf16 (the common converted read). On a shared machine the 16 MiB figures swing with other tenants' memory
 * traffic. Arguments of {@link #main} select benchmarks and parameters.
 *
 * <p>Run (or use {@code scripts/bench.sh}, which runs every benchmark):
 * {@code mvn -q -pl benchmarks -am compile dependency:build-classpath -Dmdep.outputFile=target/bench.cp}, then
 * {@code java -cp benchmarks/target/classes:$(cat benchmarks/target/bench.cp) dev.modelfs.bench.MlxDequantBench}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
public class MlxDequantBench {

    /** f32 output bytes per invocation: 16 MiB, and 128 KiB for an in-cache comparison. */
    @Param({"16777216", "131072"})
    public long outBytes;

    /** Which kernels: the scalar loops or the Vector API ones (same bytes). */
    @Param({"SCALAR", "VECTOR"})
    public Kernels.Impl impl;

    private long elems;
    /** Row length of the re-pack benchmark (a 2048-wide projection's rows). */
    private static final long REPACK_ROW = 2048;

    private Arena arena;
    private MemorySegment dst;
    private MemorySegment castSrc;
    private MemorySegment castDst;
    private MemorySegment bf16Dst;
    private Case int4;
    private Case int4Mapped;
    /** int4 g64 with the two-pass bf16 output (no fused kernel). */
    private MlxDequantizer twoPass;
    private Case int8;
    private Case nvfp4;
    private Case mxfp4;
    private Case mxfp8;

    private record Case(MlxDequantizer dq, MlxTensorData data, long groups) {
        /** The same tensor with its codes, scales and biases in read-only file mappings, as blobs are served. */
        Case mapped(Arena arena) {
            MlxTensorData t = data;
            return new Case(dq, new MlxTensorData(map(t.codes(), arena), t.codesOffset(), map(t.scales(), arena),
                    t.scalesOffset(), t.scaleType(), t.biases() == null ? null : map(t.biases(), arena), t.biasesOffset(),
                    t.globalScale()), groups);
        }

        private static MemorySegment map(MemorySegment seg, Arena arena) {
            try {
                Path f = Files.createTempFile("modelfs-bench", ".bin");
                try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    ch.write(seg.asByteBuffer());
                    return ch.map(FileChannel.MapMode.READ_ONLY, 0, seg.byteSize(), arena);
                } finally {
                    Files.delete(f);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private Case makeCase(MlxQuant q, Random rnd) {
        long groups = elems / q.groupSize();
        MemorySegment codes = arena.allocate(groups * q.codeBytesPerGroup(), 64);
        for (long i = 0; i < codes.byteSize(); i += 8) codes.set(ValueLayout.JAVA_LONG_UNALIGNED, i, rnd.nextLong());
        if (q.mode() == dev.modelfs.quant.mlx.MlxMode.AFFINE) {
            MemorySegment scales = arena.allocate(groups * 2, 64), biases = arena.allocate(groups * 2, 64);
            for (long g = 0; g < groups; g++) {
                scales.set(I16, 2 * g, FloatCasts.f32ToBf16((float) (rnd.nextGaussian() * 0.01)));
                biases.set(I16, 2 * g, FloatCasts.f32ToBf16((float) (rnd.nextGaussian() * 0.1)));
            }
            return new Case(MlxDequantizer.of(q, impl), new MlxTensorData(codes, 0, scales, 0, ScaleType.BF16, biases, 0, 1f), groups);
        }
        MemorySegment scales = arena.allocate(groups, 64);
        for (long g = 0; g < groups; g++) {
            // plausible scales: E4M3 around 0.1..2 for nvfp4, E8M0 around 2^-10..2^0 for mx modes
            int b = q.bits() == 4 && q.groupSize() == 16 ? 0x28 + rnd.nextInt(0x20) : 117 + rnd.nextInt(10);
            scales.set(ValueLayout.JAVA_BYTE, g, (byte) b);
        }
        return new Case(MlxDequantizer.of(q, impl), new MlxTensorData(codes, 0, scales, 0, ScaleType.U8, null, 0, 1f), groups);
    }

    @Setup(Level.Trial)
    public void setup() {
        arena = Arena.ofShared();
        elems = outBytes / 4;
        Random rnd = new Random(1234);
        dst = arena.allocate(outBytes, 64);
        int4 = makeCase(MlxQuant.affine(4, 64), rnd);
        int4Mapped = int4.mapped(arena);
        twoPass = MlxDequantizer.twoPass(MlxQuant.affine(4, 64), impl);
        int8 = makeCase(MlxQuant.affine(8, 64), rnd);
        nvfp4 = makeCase(MlxQuant.of("nvfp4", null), rnd);
        mxfp4 = makeCase(MlxQuant.of("mxfp4", null), rnd);
        mxfp8 = makeCase(MlxQuant.of("mxfp8", null), rnd);
        bf16Dst = arena.allocate(outBytes / 2, 64);
        castSrc = arena.allocate(outBytes, 64);
        for (long i = 0; i < outBytes; i += 4) castSrc.set(F32, i, (float) rnd.nextGaussian());
        castDst = arena.allocate(outBytes / 2, 64);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    private MemorySegment run(Case c) {
        c.dq().dequantize(c.data(), 0, c.groups(), dst, 0);
        return dst;
    }

    @Benchmark
    public MemorySegment int4g64Bf16() {
        return run(int4);
    }

    /** int4 with codes, scales and biases in file mappings (the real read path's sources). */
    @Benchmark
    public MemorySegment int4g64Mapped() {
        return run(int4Mapped);
    }

    /**
     * The common converted read: mapped int4 to bf16 output in one pass (the fused kernel, no f32 scratch).
     * Reported per f32-equivalent byte; the bf16 written is half.
     */
    @Benchmark
    public MemorySegment int4g64ToBf16Mapped() {
        Case c = int4Mapped;
        c.dq().dequantize(c.data(), 0, c.groups(), FloatFormat.BF16, bf16Dst, 0);
        return bf16Dst;
    }

    /**
     * As {@link #int4g64ToBf16Mapped} through the two passes the fused kernel replaced ({@code
     * MlxDequantizer.twoPass}: int4 to an f32 scratch slice, then the bf16 cast): the comparison for it.
     */
    @Benchmark
    public MemorySegment int4g64ToBf16MappedTwoPass() {
        Case c = int4Mapped;
        twoPass.dequantize(c.data(), 0, c.groups(), FloatFormat.BF16, bf16Dst, 0);
        return bf16Dst;
    }

    @Benchmark
    public MemorySegment int8g64Bf16() {
        return run(int8);
    }

    @Benchmark
    public MemorySegment nvfp4() {
        return run(nvfp4);
    }

    @Benchmark
    public MemorySegment mxfp4() {
        return run(mxfp4);
    }

    @Benchmark
    public MemorySegment mxfp8() {
        return run(mxfp8);
    }

    /** Reads 16 MiB of f32, writes 8 MiB of bf16. */
    @Benchmark
    public MemorySegment castF32ToBf16() {
        FloatCasts.f32ToBf16(castSrc, 0, castDst, 0, elems, impl);
        return castDst;
    }

    /** Reads 16 MiB of f32, writes 8 MiB of f16 (the scalar loop under both implementations). */
    @Benchmark
    public MemorySegment castF32ToF16() {
        FloatCasts.f32ToF16(castSrc, 0, castDst, 0, elems, impl);
        return castDst;
    }

    /**
     * int4 (group 64) re-packed as GGUF Q4_1 blocks, row by row as the synthesized {@code model.gguf} serves it
     * ({@code MlxRepack}, no dequantization: {@code impl} does not apply). Output is 20 bytes per 32 elements.
     */
    @Benchmark
    public MemorySegment int4RepackQ4_1Mapped() {
        long rows = elems / REPACK_ROW, rowBytes = MlxRepack.Kind.Q4_1.rowBytes(REPACK_ROW);
        for (long r = 0; r < rows; r++) {
            MlxRepack.row(int4Mapped.data(), 64, REPACK_ROW, MlxRepack.Kind.Q4_1, r, dst, r * rowBytes);
        }
        return dst;
    }

    /**
     * Runs every benchmark; arguments narrow it down: {@code name=v1,v2} sets a parameter (e.g. {@code impl=VECTOR}),
     * {@code prof=NAME} adds a JMH profiler (e.g. {@code prof=gc}), anything else is a regular expression for the
     * benchmark methods (e.g. {@code int4.*}).
     */
    public static void main(String[] args) throws RunnerException {
        String methods = "";
        OptionsBuilder builder = new OptionsBuilder();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (a.startsWith("prof=")) {
                builder.addProfiler(a.substring(5));
            } else if (eq > 0) {
                builder.param(a.substring(0, eq), a.substring(eq + 1).split(","));
            } else {
                methods = a;
            }
        }
        Options opt = builder
                .include(MlxDequantBench.class.getName() + "\\.(" + (methods.isEmpty() ? ".*" : methods) + ")$")
                .forks(1)
                .warmupIterations(3).warmupTime(TimeValue.seconds(1))
                .measurementIterations(3).measurementTime(TimeValue.seconds(1))
                .jvmArgsAppend("--enable-native-access=ALL-UNNAMED")
                .build();
        Collection<RunResult> results = new Runner(opt).run();
        System.out.println();
        System.out.printf("%-16s %-7s %10s %12s %8s %8s%n", "benchmark", "impl", "out bytes", "ops/s", "GB/s", "GiB/s");
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark();
            name = name.substring(name.lastIndexOf('.') + 1);
            long out = Long.parseLong(r.getParams().getParam("outBytes"));
            double ops = r.getPrimaryResult().getScore();
            double bytes = ops * out;
            System.out.printf("%-16s %-7s %10d %12.2f %8.2f %8.2f%s%n", name, r.getParams().getParam("impl"), out, ops,
                    bytes / 1e9, bytes / (1L << 30),
                    name.startsWith("cast") ? "   (f32 input; 16-bit output is half)"
                            : name.contains("ToBf16") ? "   (f32-equivalent; bf16 output is half)"
                            : name.contains("Repack") ? "   (f32-equivalent; Q4_1 output is 5/32)" : "   (f32 output)");
        }
    }
}
