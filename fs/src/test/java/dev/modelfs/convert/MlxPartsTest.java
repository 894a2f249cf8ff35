package dev.modelfs.convert;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.format.LittleEndian;
import dev.modelfs.model.BlobRange;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.quant.mlx.MlxQuant;
import dev.modelfs.quant.mlx.MlxTensorData;
import dev.modelfs.quant.mlx.ScaleType;
import dev.modelfs.store.Digest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Where an MLX tensor's codes, scales, biases and global scale are: each blob once, each piece at its offset. */
class MlxPartsTest {
    static final Digest CODES = new Digest("d".repeat(64));
    static final Digest SIDE = new Digest("e".repeat(64));
    static final MlxQuant INT4 = MlxQuant.of("int4", 64);
    // 2 rows of 64 int4 values: 2 groups, 32 code bytes each
    static final StoredTensor CODES_T = new StoredTensor("w", Dtype.U32, new long[] {2, 8}, new BlobRange(CODES, 100, 4, 64));

    static StoredTensor side(String key, Dtype dtype, long offset, long length) {
        return new StoredTensor(key, dtype, new long[] {2, 1}, new BlobRange(SIDE, 40, offset, length));
    }

    @Test
    void eachBlobIsListedOnceAndEachPieceReadsItsOwnOffset() {
        LogicalTensor t = new LogicalTensor("w", "", "w", CODES_T, side("w.scales", Dtype.F16, 0, 4),
                side("w.biases", Dtype.F16, 8, 4), side("w.global_scale", Dtype.F32, 16, 4), INT4, new long[] {2, 64});
        MlxParts parts = new MlxParts(t);
        assertEquals(List.of(new BlobRef(CODES, 100), new BlobRef(SIDE, 40)), parts.blobs());
        MemorySegment codes = Arena.ofAuto().allocate(100);
        MemorySegment side = Arena.ofAuto().allocate(40);
        side.set(LittleEndian.F32, 16, 0.25f);
        MlxTensorData d = parts.data(List.of(codes, side));
        assertSame(codes, d.codes());
        assertEquals(4, d.codesOffset());
        assertSame(side, d.scales());
        assertEquals(0, d.scalesOffset());
        assertSame(side, d.biases());
        assertEquals(8, d.biasesOffset());
        assertEquals(ScaleType.F16, d.scaleType());
        assertEquals(0.25f, d.globalScale());
    }

    @Test
    void withoutBiasesOrGlobalScaleTheScaleIsOne() {
        LogicalTensor t = new LogicalTensor("w", "", "w", CODES_T, side("w.scales", Dtype.BF16, 0, 4), null, null, INT4,
                new long[] {2, 64});
        MlxParts parts = new MlxParts(t);
        MlxTensorData d = parts.data(List.of(Arena.ofAuto().allocate(100), Arena.ofAuto().allocate(40)));
        assertNull(d.biases());
        assertEquals(1f, d.globalScale());
        assertEquals(ScaleType.BF16, d.scaleType());
    }

    @Test
    void codesThatDoNotMatchTheShapeAndANonF32GlobalScaleAreRefused() {
        StoredTensor shortCodes = new StoredTensor("w", Dtype.U32, new long[] {2, 7}, new BlobRange(CODES, 100, 4, 56));
        assertThrows(IllegalArgumentException.class, () -> new MlxParts(new LogicalTensor("w", "", "w", shortCodes,
                side("w.scales", Dtype.F16, 0, 4), null, null, INT4, new long[] {2, 64})));
        assertThrows(IllegalArgumentException.class, () -> new MlxParts(new LogicalTensor("w", "", "w", CODES_T,
                side("w.scales", Dtype.F16, 0, 4), null, side("g", Dtype.F16, 16, 2), INT4, new long[] {2, 64})));
        assertThrows(IllegalArgumentException.class, () -> new MlxParts(new LogicalTensor("w", "", "w", CODES_T,
                side("w.scales", Dtype.I32, 0, 8), null, null, INT4, new long[] {2, 64})));
    }
}
