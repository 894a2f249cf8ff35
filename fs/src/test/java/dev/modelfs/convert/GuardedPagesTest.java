package dev.modelfs.convert;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.format.LittleEndian;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.model.BlobRange;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.quant.FloatCasts;
import dev.modelfs.quant.ggml.GgmlDequantizers;
import dev.modelfs.quant.mlx.MlxDequantizer;
import dev.modelfs.quant.mlx.MlxQuant;
import dev.modelfs.quant.mlx.MlxRepack;
import dev.modelfs.store.Digest;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every converted-data family that reads mapped blob pages touches them first ({@link GuardedPages}; SEMANTICS.md
 * "When the store's disk fails"): over a mapped blob that shrank under it (its last pages now raise {@code SIGBUS}),
 * {@link UnitSource.MlxGroups}, {@link UnitSource.Repacked} and {@link Gathered} fail with the JVM's
 * {@link InternalError} inside {@link GuardedPages#touch}, before a conversion kernel (the Vector API's compiled
 * loads, where the fault ended the process) reads a page; the MLX ones before writing any output.
 */
class GuardedPagesTest {
    private static final Digest BLOB = new Digest("b".repeat(64));
    private static final int ROWS = 16, ROW = 1024, PAGE = 4096;

    @TempDir
    Path tmp;

    /** A blob file of {@code bytes}, mapped, then cut to {@code keep} bytes: the pages after it fault. */
    private MemorySegment shrunk(byte[] bytes, long keep, Arena arena) throws IOException {
        Path f = Files.write(tmp.resolve("blob"), bytes);
        MemorySegment seg;
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            seg = ch.map(FileChannel.MapMode.READ_ONLY, 0, bytes.length, arena);
            ch.truncate(keep);
        }
        return seg;
    }

    /** An MLX affine int4 tensor (group 32) of {@value #ROWS} x {@value #ROW}: scales and biases, then codes from a page boundary. */
    private static byte[] mlxBlob() {
        int groups = ROWS * ROW / 32;
        byte[] b = new byte[PAGE + ROWS * ROW / 2];
        Random r = new Random(35);
        MemorySegment s = MemorySegment.ofArray(b);
        for (int g = 0; g < groups; g++) {
            s.set(LittleEndian.I16, 2L * g, FloatCasts.f32ToBf16((r.nextInt(200) + 1) / 4096f));
            s.set(LittleEndian.I16, 2L * groups + 2L * g, FloatCasts.f32ToBf16(-(r.nextInt(200) + 1) / 1024f));
        }
        for (int i = PAGE; i < b.length; i++) {
            b[i] = (byte) r.nextInt(256);
        }
        return b;
    }

    private static MlxParts mlxParts(long size) {
        long groups = ROWS * ROW / 32;
        StoredTensor codes = new StoredTensor("w", Dtype.U32, new long[] {ROWS, ROW / 8}, new BlobRange(BLOB, size, PAGE, ROWS * ROW / 2));
        StoredTensor scale = new StoredTensor("w.scales", Dtype.BF16, new long[] {ROWS, ROW / 32}, new BlobRange(BLOB, size, 0, 2 * groups));
        StoredTensor bias = new StoredTensor("w.biases", Dtype.BF16, new long[] {ROWS, ROW / 32},
                new BlobRange(BLOB, size, 2 * groups, 2 * groups));
        return new MlxParts(new LogicalTensor("w", "", "w", codes, scale, bias, null, MlxQuant.of("int4", 32), new long[] {ROWS, ROW}));
    }

    @Test
    void mlxGroupsTouchTheirPagesBeforeTheKernelReadsAny() throws IOException {
        byte[] blob = mlxBlob();
        MlxParts parts = mlxParts(blob.length);
        for (var order : Arrays.asList(null, (java.util.function.LongUnaryOperator) u -> ROWS - 1 - u)) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment seg = shrunk(blob, blob.length - PAGE, arena);    // the last rows' codes are gone
                UnitSource.MlxGroups src = new UnitSource.MlxGroups(parts, MlxDequantizer.of(parts.t.quant()), ROW / 32, OutputType.F32);
                MemorySegment dst = arena.allocate(ROWS * src.outUnitBytes());
                faultsInTouch(() -> src.write(List.of(seg), 0, ROWS, order, dst));
                assertUntouched(dst);
            }
        }
    }

    @Test
    void repackedMlxRowsTouchTheirPagesBeforeTheKernelReadsAny() throws IOException {
        byte[] blob = mlxBlob();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = shrunk(blob, blob.length - PAGE, arena);
            UnitSource.Repacked src = new UnitSource.Repacked(mlxParts(blob.length), ROW, MlxRepack.Kind.Q4_1);
            MemorySegment dst = arena.allocate(ROWS * src.outUnitBytes());
            faultsInTouch(() -> src.write(List.of(seg), 0, ROWS, null, dst));
            assertUntouched(dst);
        }
    }

    @Test
    void gatheredGgmlRowsTouchTheirPagesBeforeTheKernelReadsThem() throws IOException {
        byte[] blob = new byte[ROWS * ROW * 2];                                  // F16 rows, 2 KiB each
        new Random(35).nextBytes(blob);
        for (int i = 1; i < blob.length; i += 2) {
            blob[i] &= 0x3b;                                                     // finite halves
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = shrunk(blob, blob.length / 2, arena);
            Gathered src = new Gathered(new BlobRef(BLOB, blob.length), 1, List.of(new Gathered.Part(List.of(
                    new Gathered.Source(0, GgmlDequantizers.forType(GgmlType.F16), ROWS, ROW)), false)), OutputType.F32);
            MemorySegment dst = arena.allocate(ROWS * src.outUnitBytes());
            faultsInTouch(() -> src.write(List.of(seg), 0, ROWS, null, dst));
        }
    }

    private static void faultsInTouch(Runnable write) {
        InternalError e = assertThrows(InternalError.class, write::run, "a page past the blob's end faults");
        assertTrue(Arrays.stream(e.getStackTrace()).anyMatch(f -> f.getClassName().equals(GuardedPages.class.getName())),
                "the fault is taken in GuardedPages.touch, not in a kernel: " + Arrays.toString(Arrays.copyOf(e.getStackTrace(), 6)));
    }

    private static void assertUntouched(MemorySegment dst) {
        assertEquals(-1, dst.mismatch(MemorySegment.ofArray(new byte[(int) dst.byteSize()])), "no output written before the fault");
    }
}
