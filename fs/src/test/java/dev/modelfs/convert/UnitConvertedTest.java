package dev.modelfs.convert;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I16;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.modelfs.arch.QkPermutation;
import dev.modelfs.bytes.BlobRef;
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
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The converted-data family: shifted, re-packed, reordered and chunked units, each checked against values
 * computed here with the quant kernels' scalar definitions or plain arithmetic.
 */
class UnitConvertedTest {
    private static final Digest BLOB = new Digest("a".repeat(64));
    private static final ValueLayout.OfShort U16 = I16;

    /** A shifted source adds the constant in f32 to the widened values. */
    @Test
    void shiftedRowsAddInF32() {
        int n = 6;
        MemorySegment blob = Arena.ofAuto().allocate(2L * n);
        for (int i = 0; i < n; i++) {
            blob.set(U16, 2L * i, FloatCasts.f32ToBf16(i / 128f - 0.02f));
        }
        StoredTensor s = new StoredTensor("n", Dtype.BF16, new long[]{n}, new BlobRange(BLOB, blob.byteSize(), 0, blob.byteSize()));
        UnitConverted c = new UnitConverted(new UnitSource.Shifted(UnitSource.Blocks.stored(s, n, OutputType.F32), 1f, OutputType.F32), 1, null, "n");
        MemorySegment dst = Arena.ofAuto().allocate(c.length());
        c.compute(0, List.of(blob), dst);
        for (int i = 0; i < n; i++) {
            float w = FloatCasts.bf16ToF32(blob.get(U16, 2L * i));
            assertEquals(Float.floatToIntBits(w + 1f), Float.floatToIntBits(dst.get(F32, 4L * i)), "element " + i);
        }
    }

    /** MLX 4-bit tensors re-packed as GGUF blocks decode (ggml kernels) to what the MLX dequantizer gives. */
    @Test
    void repackedBlocksDecodeToTheMlxValues() {
        Random rnd = new Random(7);
        for (MlxRepack.Kind kind : MlxRepack.Kind.values()) {
            int rows = 3, rowElems = 128;
            MlxQuant q = switch (kind) {
                case MXFP4 -> MlxQuant.of("mxfp4", null);
                case NVFP4 -> MlxQuant.of("nvfp4", null);
                case Q4_1 -> MlxQuant.of("int4", 64);
            };
            int groups = rows * rowElems / q.groupSize();
            int codeBytes = rows * rowElems / 2;
            boolean affine = kind == MlxRepack.Kind.Q4_1;
            int scaleBytes = affine ? 2 : 1;
            MemorySegment blob = Arena.ofAuto().allocate(codeBytes + 2L * groups * scaleBytes);
            for (int i = 0; i < codeBytes; i++) {
                blob.set(ValueLayout.JAVA_BYTE, i, (byte) rnd.nextInt(256));
            }
            for (int g = 0; g < groups; g++) {
                if (affine) {   // bf16 values that are exact in f16
                    blob.set(U16, codeBytes + 2L * g, FloatCasts.f32ToBf16((rnd.nextInt(200) + 1) / 4096f));
                    blob.set(U16, codeBytes + 2L * groups + 2L * g, FloatCasts.f32ToBf16(-(rnd.nextInt(200)) / 1024f));
                } else {
                    blob.set(ValueLayout.JAVA_BYTE, codeBytes + g, (byte) (kind == MlxRepack.Kind.MXFP4 ? 120 + rnd.nextInt(10) : 0x30 + rnd.nextInt(16)));
                }
            }
            long size = blob.byteSize();
            StoredTensor codes = new StoredTensor("w", Dtype.U32, new long[]{rows, rowElems / 8}, new BlobRange(BLOB, size, 0, codeBytes));
            StoredTensor scale = new StoredTensor("w.scale", affine ? Dtype.BF16 : Dtype.U8, new long[]{rows, rowElems / q.groupSize()},
                    new BlobRange(BLOB, size, codeBytes, (long) groups * scaleBytes));
            StoredTensor bias = affine ? new StoredTensor("w.bias", Dtype.BF16, new long[]{rows, rowElems / q.groupSize()},
                    new BlobRange(BLOB, size, codeBytes + 2L * groups, 2L * groups)) : null;
            LogicalTensor t = new LogicalTensor("w", "", "w", codes, scale, bias, null, q, new long[]{rows, rowElems});
            MlxParts parts = new MlxParts(t);
            UnitSource.Repacked src = new UnitSource.Repacked(parts, rowElems, kind);
            MemorySegment out = Arena.ofAuto().allocate(rows * src.outUnitBytes());
            src.write(List.of(blob), 0, rows, null, out);
            GgmlType type = GgmlType.valueOf(kind.name());
            MemorySegment got = Arena.ofAuto().allocate(4L * rows * rowElems);
            GgmlDequantizers.forType(type).dequantize(out, 0, got, 0, (long) rows * rowElems / type.blockElements());
            MemorySegment want = Arena.ofAuto().allocate(4L * rows * rowElems);
            MlxDequantizer.of(q).dequantize(parts.data(List.of(blob)), 0, groups, want, 0);
            for (int i = 0; i < rows * rowElems; i++) {
                assertEquals(want.get(F32, 4L * i) + 0f, got.get(F32, 4L * i) + 0f, kind + " element " + i);
            }
        }
    }

    /** A permuted copy puts source row hfRowOf(r) at output row r. */
    @Test
    void reorderedUnitsAreWholeSourceRows() {
        int rows = 8, rowElems = 4;
        MemorySegment blob = Arena.ofAuto().allocate(2L * rows * rowElems);
        for (int i = 0; i < rows * rowElems; i++) {
            blob.set(U16, 2L * i, FloatCasts.f32ToBf16(i));
        }
        StoredTensor s = new StoredTensor("k", Dtype.BF16, new long[]{rows, rowElems}, new BlobRange(BLOB, blob.byteSize(), 0, blob.byteSize()));
        QkPermutation perm = new QkPermutation(2, rows);
        for (OutputType out : OutputType.values()) {
            UnitConverted c = new UnitConverted(UnitSource.Blocks.stored(s, rowElems, out), rows, r -> perm.hfRowOf((int) r), "k");
            MemorySegment dst = Arena.ofAuto().allocate(c.length());
            c.compute(0, List.of(blob), dst);
            for (int r = 0; r < rows; r++) {
                for (int e = 0; e < rowElems; e++) {
                    float v = switch (out) {
                        case F32 -> dst.get(F32, 4L * (r * rowElems + e));
                        case F16 -> FloatCasts.f16ToF32(dst.get(U16, 2L * (r * rowElems + e)));
                        case BF16 -> FloatCasts.bf16ToF32(dst.get(U16, 2L * (r * rowElems + e)));
                    };
                    assertEquals(perm.hfRowOf(r) * rowElems + e, v, 0f, out + " row " + r);
                }
            }
        }
    }

    /** A shift to a narrower type is added in f32 and rounded once (sums chosen exact in bf16: the bits are the f32's top half). */
    @Test
    void shiftedUnitsAreAddedInF32AndNarrowedOnce() {
        int n = 40;
        MemorySegment blob = Arena.ofAuto().allocate(4L * n);
        for (int i = 0; i < n; i++) {
            blob.set(F32, 4L * i, (i - 20) / 8f);
        }
        BlobRef ref = new BlobRef(BLOB, blob.byteSize());
        UnitSource f32 = UnitSource.Blocks.converted(ref, 0, 1, GgmlDequantizers.forType(GgmlType.F32), OutputType.F32);
        UnitConverted c = new UnitConverted(new UnitSource.Shifted(f32, 1f, OutputType.BF16), n, null, "norm");
        assertEquals(2L * n, c.length());
        MemorySegment dst = Arena.ofAuto().allocate(c.length());
        c.compute(0, List.of(blob), dst);
        for (int i = 0; i < n; i++) {
            short want = (short) (Float.floatToRawIntBits((i - 20) / 8f + 1f) >>> 16);
            assertEquals(want, dst.get(U16, 2L * i), "element " + i);
        }
    }

    /** Chunks are whole units of about 1 MiB, and converting chunk by chunk gives the exact widened values. */
    @Test
    void chunksAreWholeUnitsAndTogetherTheWholeTensor() {
        int rows = 200, rowElems = 3000;                   // F32 rows of 12000 bytes: 87 rows per chunk
        MemorySegment blob = Arena.ofAuto().allocate(2L * rows * rowElems);
        for (int i = 0; i < rows * rowElems; i++) {
            blob.set(U16, 2L * i, Float.floatToFloat16((i % 2048) - 1024f));
        }
        StoredTensor s = new StoredTensor("w", Dtype.F16, new long[]{rows, rowElems}, new BlobRange(BLOB, blob.byteSize(), 0, blob.byteSize()));
        UnitConverted c = new UnitConverted(UnitSource.Blocks.stored(s, rowElems, OutputType.F32), rows, null, "w");
        assertEquals(87L * 12000, c.chunkBytes());
        assertEquals(4L * rows * rowElems, c.length());
        long chunks = (c.length() + c.chunkBytes() - 1) / c.chunkBytes();
        for (long k = 0; k < chunks; k++) {
            MemorySegment dst = Arena.ofAuto().allocate(c.chunkLength(k));
            c.compute(k, List.of(blob), dst);
            long firstElem = k * c.chunkBytes() / 4;
            for (long e = 0; e < dst.byteSize() / 4; e++) {
                assertEquals(((firstElem + e) % 2048) - 1024f, dst.get(F32, 4 * e), "chunk " + k + " element " + e);
            }
        }
    }

    @Test
    void unitsOutsideTheirBlobAreRefused() {
        BlobRef ref = new BlobRef(BLOB, 100);
        var deq = GgmlDequantizers.forType(GgmlType.F32);
        assertThrows(IllegalArgumentException.class, () -> UnitConverted.blocks(ref, 0, 26, deq, OutputType.F16, "big"));
        assertEquals(50, UnitConverted.blocks(ref, 0, 25, deq, OutputType.F16, "fits").length());
    }

    /** MLX groups converted as one run and unit by unit (an identity order) give the same bytes. */
    @Test
    void mlxGroupsInOneRunEqualUnitByUnit() {
        MlxQuant q = MlxQuant.of("int4", 64);
        int rows = 4, rowElems = 256, groups = rows * rowElems / 64, codeBytes = rows * rowElems / 2;
        Random rnd = new Random(3);
        MemorySegment blob = Arena.ofAuto().allocate(codeBytes + 4L * groups);
        for (int i = 0; i < codeBytes; i++) {
            blob.set(ValueLayout.JAVA_BYTE, i, (byte) rnd.nextInt(256));
        }
        for (int g = 0; g < groups; g++) {
            blob.set(U16, codeBytes + 2L * g, FloatCasts.f32ToBf16(rnd.nextFloat() / 16));
            blob.set(U16, codeBytes + 2L * groups + 2L * g, FloatCasts.f32ToBf16(-rnd.nextFloat() / 4));
        }
        long size = blob.byteSize();
        LogicalTensor t = new LogicalTensor("w", "", "w",
                new StoredTensor("w", Dtype.U32, new long[]{rows, rowElems / 8}, new BlobRange(BLOB, size, 0, codeBytes)),
                new StoredTensor("w.scale", Dtype.BF16, new long[]{rows, rowElems / 64}, new BlobRange(BLOB, size, codeBytes, 2L * groups)),
                new StoredTensor("w.bias", Dtype.BF16, new long[]{rows, rowElems / 64}, new BlobRange(BLOB, size, codeBytes + 2L * groups, 2L * groups)),
                null, q, new long[]{rows, rowElems});
        for (OutputType out : OutputType.values()) {
            UnitConverted run = new UnitConverted(UnitSource.MlxGroups.of(t, rowElems, out), rows, null, "run");
            UnitConverted each = new UnitConverted(UnitSource.MlxGroups.of(t, rowElems, out), rows, r -> r, "each");
            MemorySegment a = Arena.ofAuto().allocate(run.length());
            MemorySegment b = Arena.ofAuto().allocate(each.length());
            run.compute(0, List.of(blob), a);
            each.compute(0, List.of(blob), b);
            assertArrayEquals(a.toArray(ValueLayout.JAVA_BYTE), b.toArray(ValueLayout.JAVA_BYTE), out.name());
            MemorySegment f32 = Arena.ofAuto().allocate(4L * rows * rowElems);
            MlxDequantizer.of(q).dequantize(new MlxParts(t).data(List.of(blob)), 0, groups, f32, 0);
            if (out == OutputType.F32) {
                assertArrayEquals(f32.toArray(ValueLayout.JAVA_BYTE), a.toArray(ValueLayout.JAVA_BYTE));
            }
        }
    }

    @Test
    void outputTypesAreTheThreeFloatTypes() {
        for (OutputType o : OutputType.values()) {
            assertEquals(o, OutputType.of(o.ggml));
        }
        assertThrows(IllegalArgumentException.class, () -> OutputType.of(GgmlType.Q8_0));
    }
}
