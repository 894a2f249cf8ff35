package dev.modelfs.arch;

/**
 * Read access to a GGUF model's metadata and tensor names, as the GGUF → Hugging Face direction of an
 * {@link ArchSpec} needs it. Implementations throw an unchecked exception with a one-line reason for a
 * KV of an unexpected type; an absent KV gives {@code dflt}.
 */
public interface GgufParams {
    /** An integer KV (any integer width), or {@code dflt}. */
    Long integer(String key, Long dflt);

    /** A FLOAT32/FLOAT64 KV as a double, or {@code dflt}. */
    Double real(String key, Double dflt);

    /** A STRING KV, or {@code dflt}. */
    String string(String key, String dflt);

    /** A BOOL KV, or {@code dflt}. */
    Boolean bool(String key, Boolean dflt);

    /** A BOOL ARRAY KV, or null when absent. */
    boolean[] bools(String key);

    /** An ARRAY KV of any integer type as ints, or null when absent. */
    int[] ints(String key);

    /** Whether the model has a tensor of this GGUF name. */
    boolean hasTensor(String name);

    /** The ggml {@code ne} (innermost first) of the tensor of this GGUF name, or null when there is none (or it is not known). */
    default long[] ne(String name) {
        return null;
    }

    /**
     * The values of a small 1-D F32 tensor read from the blob while the folder is built (rope factors), or null
     * when the model has none of that name or it could not be read; only names the caller read are known.
     */
    default float[] f32Vector(String name) {
        return null;
    }
}
