package dev.modelfs.dialect;

/**
 * One tensor-level difference between a dialect blob and its translation (docs/FORMATS.md §12), as
 * {@code modelfs show MODEL --tensors} lists it.
 *
 * <p>Invariants: {@code from} is a tensor name of the blob; {@code to} is the translated name for
 * {@link Kind#RENAMED} and {@link Kind#COMPUTED} (equal to {@code from} when only the data changes), empty
 * for {@link Kind#DROPPED}; {@code detail} is one short human-readable phrase.
 */
public record TensorChange(Kind kind, String from, String to, String detail) {

    /** What happened to the tensor. */
    public enum Kind {
        /** Same bytes under another name. */
        RENAMED,
        /** Left out of the translated file (vision, audio, projector or MTP tensors of a text face; text tensors of a clip face). */
        DROPPED,
        /** Its bytes are computed from the blob (dtype promotion, concatenation, split ...). */
        COMPUTED
    }
}
