package dev.modelfs.arch;

/**
 * The llama q/k row permutation of docs/FORMATS.md §7.2 and its inverse, on whole rows (a row = one
 * output feature: {@code in} elements of a weight, one element of a bias, or the quantized blocks of
 * one row: the permutation only moves rows, so it is valid for any row-wise quantization).
 *
 * <p>With {@code H} heads of dimension {@code D} ({@code rows = H·D}, {@code D} even):
 * {@code gguf_row[h·D + 2t + half] = hf_row[h·D + half·D/2 + t]}. Invariants: {@link #hfRowOf} and
 * {@link #ggufRowOf} are mutually inverse bijections of {@code [0, rows)}; both keep the head
 * {@code h = row / D}. {@code q_proj} uses {@code num_attention_heads}, {@code k_proj}
 * {@code num_key_value_heads} (llama.cpp's {@code LlamaModel.permute}).
 */
public record QkPermutation(int heads, int rows) {

    /** Which projection: q uses {@code n_head}, k uses {@code n_head_kv}. */
    public enum Which { Q, K }

    /**
     * @throws IllegalArgumentException unless {@code heads > 0}, {@code rows > 0} and {@code rows} is a
     *                                  multiple of {@code 2·heads}
     */
    public QkPermutation {
        if (heads <= 0 || rows <= 0 || rows % (2 * heads) != 0) {
            throw new IllegalArgumentException("cannot permute " + rows + " rows over " + heads + " heads");
        }
    }

    /** For q ({@code nHead}) or k ({@code nHeadKv}) of a tensor with {@code rows} output rows. */
    public static QkPermutation of(Which which, int nHead, int nHeadKv, int rows) {
        return new QkPermutation(which == Which.Q ? nHead : nHeadKv, rows);
    }

    /** The head dimension {@code D}. */
    public int headDim() {
        return rows / heads;
    }

    /**
     * One direction of the permutation as a row order (output row to source row) that says what it is: its
     * {@link #toString()} is a complete description (the on-disk cache names converted bytes by it, docs/FORMATS.md §11).
     *
     * @param toGguf true: GGUF rows from HF rows ({@link #hfRowOf}); false: HF rows from GGUF rows ({@link #ggufRowOf})
     */
    public record Order(QkPermutation p, boolean toGguf) implements java.util.function.LongUnaryOperator {
        @Override
        public long applyAsLong(long row) {
            return toGguf ? p.hfRowOf((int) row) : p.ggufRowOf((int) row);
        }

        @Override
        public String toString() {
            return "qk-permutation heads " + p.heads() + " rows " + p.rows() + (toGguf ? " hf->gguf" : " gguf->hf");
        }
    }

    /** GGUF row {@code r} from HF row {@link #hfRowOf}{@code (r)}: the order of a GGUF tensor made from an HF one. */
    public Order ggufOrder() {
        return new Order(this, true);
    }

    /** HF row {@code r} from GGUF row {@link #ggufRowOf}{@code (r)}: the order of an HF tensor made from a GGUF one. */
    public Order hfOrder() {
        return new Order(this, false);
    }

    /** The HF (source) row stored at GGUF row {@code ggufRow}. */
    public int hfRowOf(int ggufRow) {
        check(ggufRow);
        int d = headDim();
        int h = ggufRow / d;
        int r = ggufRow % d;
        return h * d + (r & 1) * (d / 2) + (r >> 1);
    }

    /** The GGUF row that holds HF row {@code hfRow}. */
    public int ggufRowOf(int hfRow) {
        check(hfRow);
        int d = headDim();
        int h = hfRow / d;
        int r = hfRow % d;
        int half = r / (d / 2);
        int t = r % (d / 2);
        return h * d + 2 * t + half;
    }

    private void check(int row) {
        if (row < 0 || row >= rows) {
            throw new IndexOutOfBoundsException("row " + row + " of " + rows);
        }
    }
}
