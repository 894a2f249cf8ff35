package dev.modelfs.convert;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.model.BlobRange;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.quant.mlx.MlxQuant;
import dev.modelfs.store.Digest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

/** nvfp4 with one global scale per expert of a stacked tensor (docs/FORMATS.md §4.6, §5.4). */
class MlxGlobalScalePerExpertTest {
    /** E2M1 values of codes 0..7 (docs/FORMATS.md §5.7). */
    static final float[] E2M1 = {0f, 0.5f, 1f, 1.5f, 2f, 3f, 4f, 6f};

    @Test
    void eachExpertIsMultipliedByItsOwnGlobalScale() {
        int experts = 2, rows = 2, k = 32;                 // [2, 2, 32] logical: 4 codes words a row, 2 scales a row
        int words = experts * rows * k / 8;
        int scales = experts * rows * k / 16;
        ByteBuffer b = ByteBuffer.allocate(words * 4 + scales + experts * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int w = 0; w < words; w++) {
            b.putInt(0x76543210);  // codes 0..7, element 0 in the low nibble
        }
        for (int s = 0; s < scales; s++) {
            b.put((byte) (s % 2 == 0 ? 0x38 : 0x40));        // E4M3 1.0 and 2.0
        }
        float[] global = {2f, 0.25f};
        b.putFloat(global[0]).putFloat(global[1]);
        Digest d = new Digest("ab".repeat(32));
        long size = b.capacity();
        StoredTensor codes = new StoredTensor("w", Dtype.U32, new long[] {experts, rows, k / 8}, new BlobRange(d, size, 0, words * 4L));
        StoredTensor scale = new StoredTensor("w.scale", Dtype.U8, new long[] {experts, rows, k / 16}, new BlobRange(d, size, words * 4L, scales));
        StoredTensor g = new StoredTensor("w.global_scale", Dtype.F32, new long[] {experts, 1, 1},
                new BlobRange(d, size, words * 4L + scales, experts * 4L));
        LogicalTensor t = new LogicalTensor("w", "", "w", codes, scale, null, g, MlxQuant.of("nvfp4", 16), new long[] {experts, rows, k});
        List<MemorySegment> blobs = List.of(MemorySegment.ofArray(b.array()));
        int units = experts * rows;
        try (Arena arena = Arena.ofConfined()) {
            // group by group (the safetensors files), row by row in order, and rows reversed (a permuted GGUF row order)
            UnitConverted groups = UnitConverted.mlx(t, OutputType.F32);
            UnitConverted inRows = new UnitConverted(UnitSource.MlxGroups.of(t, k, OutputType.F32), units, null, "rows");
            UnitConverted reversed = new UnitConverted(UnitSource.MlxGroups.of(t, k, OutputType.F32), units, u -> units - 1 - u, "reversed");
            MemorySegment a = arena.allocate(groups.length());
            MemorySegment r = arena.allocate(inRows.length());
            MemorySegment v = arena.allocate(reversed.length());
            groups.compute(0, blobs, a);
            inRows.compute(0, blobs, r);
            reversed.compute(0, blobs, v);
            for (int i = 0; i < experts * rows * k; i++) {
                int expert = i / (rows * k);
                float blockScale = (i / 16) % 2 == 0 ? 1f : 2f;
                float want = E2M1[i % 8] * blockScale * global[expert];
                assertEquals(want, a.getAtIndex(F32, i), "element " + i);
                assertEquals(want, r.getAtIndex(F32, i), "rows, element " + i);
                assertEquals(want, v.getAtIndex(F32, (units - 1 - i / k) * k + i % k), "reversed rows, element " + i);
            }
        }
    }

    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
}
