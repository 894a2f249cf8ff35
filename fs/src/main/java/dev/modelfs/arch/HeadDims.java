package dev.modelfs.arch;

/**
 * The check of architectures whose llama.cpp graph assumes {@code head_dim = hidden / heads} (OLMo 2, Granite): a
 * config or GGUF stating another head dimension is refused in both directions with a one-line reason.
 */
final class HeadDims {
    private HeadDims() {
    }

    /** Refuses a config whose {@code head_dim} is not {@code hidden_size / num_attention_heads}. */
    static void requireQuotient(String arch, ConfigKeys.Dims d) {
        if ((long) d.heads() * d.headDim() != d.hidden()) {
            throw new IllegalArgumentException(arch + " head_dim " + d.headDim() + " is not hidden_size / num_attention_heads "
                    + "(llama.cpp's " + arch + " assumes it)");
        }
    }

    /** Refuses a GGUF whose {@code attention.key_length} is not {@code embedding_length / head_count}. */
    static void requireQuotient(String arch, GgufParams m, String p) {
        long hidden = m.integer(p + "embedding_length", 0L);
        long heads = m.integer(p + "attention.head_count", 1L);
        Long keyLength = m.integer(p + "attention.key_length", null);
        if (keyLength != null && heads > 0 && keyLength * heads != hidden) {
            throw new IllegalArgumentException(arch + " " + p + "attention.key_length " + keyLength + " is not embedding_length / head_count");
        }
    }
}
