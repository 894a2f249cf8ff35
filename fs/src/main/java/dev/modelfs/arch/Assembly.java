package dev.modelfs.arch;

import java.util.List;

/**
 * A per-layer Hugging Face tensor that is not one GGUF tensor under another name (docs/FORMATS.md §7.3):
 * HF {@code model.layers.N.<hf>} (the whole name, suffix included, as the HF checkpoint spells it) made of
 * the GGUF tensors {@code blk.N.<gguf>} of its {@link Part}s, in GGUF order: each a stack of matrices
 * ({@code ne = [cols, rows, batches]}; a 2-D tensor is {@code rows = ne[0]} rows of one element per batch
 * {@code ne[1]}; a 1-D one is one batch), its sources' rows interleaved, transposed or not; the output
 * of a batch is the parts' rows one after the other.
 *
 * <p>Invariants: {@code parts} is non-empty; every GGUF name has its suffix, except a {@link #isRename rename} of a
 * name the checkpoint and the GGUF both spell without one (mllama's gates, which Ollama's converter keeps); a GGUF tensor belongs to at
 * most one assembly of an architecture and to no {@link LayerRule}, except the parts of a {@link #isRowSplit row
 * split}, whose rules all name this assembly's HF tensor (the Hugging Face → GGUF direction, GraniteMoe). Two assemblies give
 * one HF name only as a rename and a row split of other GGUF tensors, which then has no rules and is read only (Gemma 4's
 * {@code experts.gate_up_proj}: the fused tensor, or in some GGUFs its halves; {@link TensorNames#splitParts} skips it).
 */
public record Assembly(String hf, List<Part> parts, Layout layout) {

    /** GGUF tensors ({@code <name>.<suffix>}) whose rows are interleaved, then transposed or not. */
    public record Part(List<String> gguf, boolean transposed) {
        public Part {
            gguf = List.copyOf(gguf);
        }
    }

    /** The HF shape of the assembled tensor. */
    public enum Layout {
        /** {@code [batches, rows, cols]}, a dimension of 1 among rows and cols left out (expert biases). */
        STACKED,
        /** {@code [batches * rows, cols]}. */
        ROWS,
        /** {@code [batches * rows * cols]}. */
        VECTOR
    }

    public Assembly {
        parts = List.copyOf(parts);
        if (parts.isEmpty()) {
            throw new IllegalArgumentException("an assembly needs a part");
        }
    }

    /** One GGUF tensor under an HF name the usual {@code .weight}/{@code .bias} rule cannot spell, values as stored. */
    static Assembly renamed(String hf, String gguf, Layout layout) {
        return new Assembly(hf, List.of(new Part(List.of(gguf), false)), layout);
    }

    /** Whether this is one GGUF tensor as stored (no interleaving, no transposition). */
    public boolean isRename() {
        return parts.size() == 1 && parts.getFirst().gguf().size() == 1 && !parts.getFirst().transposed();
    }

    /**
     * Whether this is a stack of whole GGUF tensors' rows: two or more parts of one untransposed tensor each,
     * {@link Layout#STACKED}; its inverse cuts every batch's rows into the parts (docs/FORMATS.md §7.4).
     */
    public boolean isRowSplit() {
        return parts.size() > 1 && layout == Layout.STACKED
                && parts.stream().allMatch(p -> p.gguf().size() == 1 && !p.transposed());
    }

    /** The GGUF names (per layer, with suffix) this assembly reads. */
    public List<String> gguf() {
        return parts.stream().flatMap(p -> p.gguf().stream()).toList();
    }
}
