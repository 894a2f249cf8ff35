package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufFile;
import java.util.List;
import java.util.Map;

/**
 * The translated header of a dialect blob for one {@link Face} (docs/FORMATS.md §12.1).
 *
 * <p>Invariants: {@code header} is a valid {@link GgufFile} whose {@code dataStart} is the blob's and whose
 * tensor offsets address the blob (relative to that data start): a tensor without an entry in {@code ops}
 * is the blob's bytes at that offset unchanged, one with an entry is computed from the bytes there by its
 * {@link TensorOp} and has the translated type and shape of its info. A KV whose {@code rawLength} is
 * negative is new or changed (encoded from its value); any other KV is the blob's bytes at its raw range.
 * {@code changes} lists every renamed, dropped and computed tensor of the blob, in blob order.
 */
public record Translation(String handler, Face face, GgufFile header, Map<String, TensorOp> ops, List<TensorChange> changes,
                          List<String> keyEdits) {

    public Translation {
        ops = Map.copyOf(ops);
        changes = List.copyOf(changes);
        keyEdits = List.copyOf(keyEdits);
    }

    /** Whether every tensor is a slice of the blob (then {@link #header()} can stand for the blob's own header). */
    public boolean slicesOnly() {
        return ops.isEmpty();
    }

    /** Counts for {@code modelfs show}: KV edits, renamed, dropped and computed tensors. */
    public String summary() {
        long renamed = changes.stream().filter(c -> c.kind() == TensorChange.Kind.RENAMED).count();
        long dropped = changes.stream().filter(c -> c.kind() == TensorChange.Kind.DROPPED).count();
        long computed = changes.stream().filter(c -> c.kind() == TensorChange.Kind.COMPUTED).count();
        return keyEdits.size() + " metadata edits (" + String.join("; ", keyEdits) + "), " + renamed + " tensors renamed, "
                + dropped + " dropped, " + computed + " computed";
    }
}
