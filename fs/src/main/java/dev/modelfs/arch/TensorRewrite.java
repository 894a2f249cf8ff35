package dev.modelfs.arch;

import java.util.Arrays;

/**
 * What llama.cpp's converter does to one Hugging Face tensor beyond its name and type, as data (Hugging Face → GGUF,
 * docs/FORMATS.md §7.5): the GGUF shape when it squeezes the tensor ({@code ggufShape}, logical order, null: the HF
 * shape), the V heads of a gated delta-net moved from grouped to tiled order in the rows ({@code rows}; of a 1-D tensor,
 * its elements) or in the column blocks of every row ({@code columns}), and a function of every value ({@code function}).
 * Any part may be null (absent). The view turns it into {@code convert} sources; the planner only plans.
 */
public record TensorRewrite(long[] ggufShape, VHeads rows, VHeads columns, Function function) {

    /** A function llama.cpp's converter applies to every value, computed in f32. */
    public enum Function {
        /** {@code -exp(x)}: {@code ssm_a} from {@code A_log}. */
        NEG_EXP
    }

    /**
     * The V heads of a gated delta-net reordered from grouped by K head ({@code [K0: v0..v(r-1)], [K1: ...]}) to tiled
     * ({@code v0 of K0, v0 of K1, ..., v1 of K0, ...}), llama.cpp's {@code _reorder_v_heads}: after {@code fixed} leading
     * units kept in place (the q and k rows of {@code attn_qkv}, the q and k channels of {@code ssm_conv1d}),
     * {@code kHeads * vPerK} heads of {@code headSize} units each. Invariants: all positive ({@code fixed} non-negative).
     */
    public record VHeads(long fixed, int kHeads, int vPerK, long headSize) {
        public VHeads {
            if (fixed < 0 || kHeads <= 0 || vPerK <= 0 || headSize <= 0) {
                throw new IllegalArgumentException("V heads " + fixed + "/" + kHeads + "/" + vPerK + "/" + headSize);
            }
        }

        /** The units this order covers. */
        public long units() {
            return fixed + (long) kHeads * vPerK * headSize;
        }

        /** The source unit of output unit {@code i} (in {@code [0, units())}). */
        public long sourceOf(long i) {
            if (i < fixed) {
                return i;
            }
            long r = i - fixed;
            long t = r / headSize;
            return fixed + ((t % kHeads) * vPerK + t / kHeads) * headSize + r % headSize;
        }

        /** Per output head block, its source head block ({@code fixed} must be 0): the column-block order of {@code ssm_out}. */
        public int[] blockOrder() {
            if (fixed != 0) {
                throw new IllegalStateException("a block order has no fixed part");
            }
            int n = kHeads * vPerK;
            int[] out = new int[n];
            for (int t = 0; t < n; t++) {
                out[t] = (t % kHeads) * vPerK + t / kHeads;
            }
            return out;
        }

        /** A complete description (the on-disk cache identity of reordered data). */
        public String identity() {
            return "v-heads grouped->tiled fixed " + fixed + " k " + kHeads + " v/k " + vPerK + " size " + headSize;
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TensorRewrite r && Arrays.equals(ggufShape, r.ggufShape) && java.util.Objects.equals(rows, r.rows)
                && java.util.Objects.equals(columns, r.columns) && function == r.function;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(Arrays.hashCode(ggufShape), rows, columns, function);
    }

    /** What {@code modelfs show} adds to the tensor's line. */
    public String describe() {
        StringBuilder sb = new StringBuilder();
        if (function == Function.NEG_EXP) {
            sb.append(", -exp(x)");
        }
        if (rows != null) {
            sb.append(", V heads tiled");
        }
        if (columns != null) {
            sb.append(", V-head column blocks tiled");
        }
        if (ggufShape != null) {
            sb.append(", squeezed to ").append(Arrays.toString(ggufShape));
        }
        return sb.toString();
    }
}
