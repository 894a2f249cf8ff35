package dev.modelfs.arch;

import java.util.function.LongUnaryOperator;

/**
 * The row order that undoes llama.cpp's V-head reordering of a gated delta-net ({@code _LinearAttentionVReorderBase.
 * _reorder_v_heads}, docs/FORMATS.md §7.3): Hugging Face stores the {@code kHeads * vPerK} V heads grouped by K head
 * (head {@code k * vPerK + j} is the {@code j}-th V head of K head {@code k}), llama.cpp tiled (that head is at position
 * {@code j * kHeads + k}). Rows {@code [offset, offset + kHeads * vPerK * headDim)} are the V heads, {@code headDim} rows
 * each; every other row of the tensor keeps its place.
 *
 * <p>Invariants: {@link #applyAsLong} maps a Hugging Face row to the GGUF row holding it and is a permutation of
 * {@code [0, rows)}; {@link #toString()} describes the order completely (the on-disk identity of reordered data).
 */
public record VHeadOrder(long offset, int kHeads, int vPerK, int headDim, long rows) implements LongUnaryOperator {
    public VHeadOrder {
        if (kHeads <= 0 || vPerK <= 0 || headDim <= 0 || offset < 0 || offset + (long) kHeads * vPerK * headDim > rows) {
            throw new IllegalArgumentException("V heads " + kHeads + " x " + vPerK + " of " + headDim + " rows from " + offset
                    + " do not fit " + rows + " rows");
        }
    }

    @Override
    public long applyAsLong(long hfRow) {
        long local = hfRow - offset;
        if (local < 0 || local >= (long) kHeads * vPerK * headDim) {
            return hfRow;
        }
        long head = local / headDim;
        return offset + gguf(head) * headDim + local % headDim;
    }

    /** The GGUF (tiled) position of Hugging Face (grouped) V head {@code head}. */
    long gguf(long head) {
        return head % vPerK * kHeads + head / vPerK;
    }

    /** The column blocks of a V-head input dimension ({@code ssm_out}): Hugging Face block {@code h} is GGUF block {@code [h]}. */
    public int[] blocks() {
        int[] out = new int[kHeads * vPerK];
        for (int h = 0; h < out.length; h++) {
            out[h] = Math.toIntExact(gguf(h));
        }
        return out;
    }

    @Override
    public String toString() {
        return "v-heads tiled->grouped k " + kHeads + " v/k " + vPerK + " dim " + headDim + " from " + offset + " of " + rows;
    }
}
