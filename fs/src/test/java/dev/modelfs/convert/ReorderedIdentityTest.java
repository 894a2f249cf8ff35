package dev.modelfs.convert;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.modelfs.arch.QkPermutation;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.quant.BlockDequantizer;
import dev.modelfs.quant.ggml.GgmlDequantizers;
import dev.modelfs.store.Digest;
import org.junit.jupiter.api.Test;

/**
 * Reordered rows have an on-disk identity exactly when the order is described ({@link UnitConverted}'s
 * {@code orderIdentity}, docs/FORMATS.md §11): the llama q/k permutation's two directions and different head counts
 * name different chunks, the same description names the same chunks, an undescribed order none; and the described
 * order is the permutation it says (its rows are {@link QkPermutation#hfRowOf} / {@link QkPermutation#ggufRowOf}).
 */
class ReorderedIdentityTest {
    private static final BlobRef BLOB = new BlobRef(new Digest("7".repeat(64)), 1 << 20);
    private static final BlockDequantizer F32 = GgmlDequantizers.forType(GgmlType.F32);

    private static UnitConverted rows(QkPermutation.Order order, boolean describe) {
        // 64 rows of 16 f32 values -> bf16
        return new UnitConverted(UnitSource.Blocks.converted(BLOB, 0, 16, F32, OutputType.BF16), 64, order,
                describe ? order.toString() : null, "t");
    }

    @Test
    void aDescribedOrderHasAnIdentityThatNamesItsDirectionAndHeads() {
        QkPermutation p4 = new QkPermutation(4, 64);
        QkPermutation p2 = new QkPermutation(2, 64);
        String toGguf = rows(p4.ggufOrder(), true).persistentName(0);
        assertNotNull(toGguf);
        assertEquals(toGguf, rows(new QkPermutation(4, 64).ggufOrder(), true).persistentName(0), "same description, same name");
        assertNotEquals(toGguf, rows(p4.hfOrder(), true).persistentName(0), "the other direction");
        assertNotEquals(toGguf, rows(p2.ggufOrder(), true).persistentName(0), "other heads");
        assertNotEquals(toGguf, UnitConverted.blocks(BLOB, 0, 64, F32, OutputType.BF16, "t").persistentName(0), "in order");
        assertNull(rows(p4.ggufOrder(), false).persistentName(0), "an undescribed order has no identity");
    }

    @Test
    void theOrderIsThePermutationItDescribes() {
        QkPermutation p = new QkPermutation(4, 64);
        for (int r = 0; r < 64; r++) {
            assertEquals(p.hfRowOf(r), p.ggufOrder().applyAsLong(r));
            assertEquals(p.ggufRowOf(r), p.hfOrder().applyAsLong(r));
            assertEquals(r, p.hfOrder().applyAsLong(p.ggufOrder().applyAsLong(r)), "inverse");
        }
    }
}
