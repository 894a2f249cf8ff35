package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * EmbeddingGemma as Ollama published it ({@code embeddinggemma}): architecture {@code gemma3} with the
 * sentence-transformers projection of the pooled embedding stored as {@code dense.0.weight} / {@code dense.1.weight}.
 * Ollama's {@code detect_ollama_embeddinggemma} and {@code handle_embeddinggemma} (docs/FORMATS.md §12.6): llama.cpp
 * reads the model as {@code gemma-embedding} (bidirectional attention, {@code dense_2} / {@code dense_3} loaded by
 * name), so the architecture is renamed, the {@code gemma3.*} keys copied to {@code gemma-embedding.*} (the old keys
 * stay, as Ollama leaves them) without the causal flag and the sliding-window pattern, the dense feature sizes taken
 * from the two tensors' shapes, and the tensors renamed. Metadata only: every tensor is the blob's bytes.
 *
 * <p>Runs before {@link Gemma3Text} (Ollama's dispatch order), which therefore never sees a file with
 * {@code dense.0.weight}.
 */
public record EmbeddingGemma() implements DialectHandler {
    private static final String TO = "gemma-embedding.";

    @Override
    public String name() {
        return "embeddinggemma";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    /** {@code detect_ollama_embeddinggemma}: architecture {@code gemma3} and a {@code dense.0.weight} tensor. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, "gemma3") && g.tensor("dense.0.weight") != null;
    }

    /**
     * @throws FormatException when {@code dense.1.weight} is missing or either dense tensor is not 2-D (llama.cpp could
     *                         not size {@code dense_2} / {@code dense_3} from them)
     */
    @Override
    public Translation translate(GgufFile g) {
        GgufTensorInfo d0 = g.tensor("dense.0.weight");
        GgufTensorInfo d1 = g.tensor("dense.1.weight");
        if (d1 == null || d0.rank() != 2 || d1.rank() != 2) {
            throw new FormatException("embeddinggemma's dense projection is not two matrices: dense.0.weight of rank " + d0.rank()
                    + ", dense.1.weight " + (d1 == null ? "missing" : "of rank " + d1.rank()));
        }
        HeaderEdit e = new HeaderEdit(g);
        e.set("general.architecture", GgufValueType.STRING, "gemma-embedding");
        e.copyPrefix("gemma3.", TO);
        e.remove(TO + "attention.causal");
        e.remove(TO + "attention.sliding_window_pattern");
        e.inject(TO + "rope.freq_base_swa", GgufValueType.FLOAT32, 10_000f);
        e.set(TO + "dense_2_feat_in", GgufValueType.UINT32, u32(d0.ne()[0]));
        e.set(TO + "dense_2_feat_out", GgufValueType.UINT32, u32(d0.ne()[1]));
        e.set(TO + "dense_3_feat_in", GgufValueType.UINT32, u32(d1.ne()[0]));
        e.set(TO + "dense_3_feat_out", GgufValueType.UINT32, u32(d1.ne()[1]));
        e.rename("dense.0.weight", "dense_2.weight");
        e.rename("dense.1.weight", "dense_3.weight");
        e.rename("norm.weight", "output_norm.weight");
        return e.build(name(), face());
    }

    private static int u32(long n) {
        if (n <= 0 || n > 0xFFFF_FFFFL) {
            throw new FormatException("dense dimension " + n + " does not fit a UINT32");
        }
        return (int) n;
    }
}
