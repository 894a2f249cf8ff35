package dev.modelfs.arch;

import java.util.function.LongUnaryOperator;

/**
 * The Hugging Face tensor of one GGUF tensor whose values or layout an architecture changes beyond a rename and a norm
 * shift ({@link ArchSpec#hfLayout}; Qwen3.5's gated delta-net, docs/FORMATS.md §7.3): its whole HF name, its HF shape
 * (the same elements), the GGUF tensor seen as {@code rows} rows of {@code ne[0]} elements, the GGUF row of each HF row
 * ({@code rowOrder}, null: in order), the column blocks of each row ({@code columnBlocks}: HF block {@code j} is GGUF block
 * {@code columnBlocks[j]}, equal blocks, null: in order) and the per-element function ({@code values}).
 */
public record HfLayout(String hfName, long[] shape, long rows, LongUnaryOperator rowOrder, int[] columnBlocks, ElementMap values) {
    public HfLayout {
        shape = shape.clone();
        columnBlocks = columnBlocks == null ? null : columnBlocks.clone();
    }
}
