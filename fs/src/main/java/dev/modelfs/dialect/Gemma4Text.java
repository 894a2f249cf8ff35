package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * Gemma 4 as Ollama's converter writes it ({@code convert/convert_gemma4.go}), for llama.cpp's text loader:
 * Ollama's {@code detect_ollama_gemma4} and {@code handle_gemma4} (docs/FORMATS.md §12.6). Metadata and names
 * only: the tokenizer model {@code llama} becomes {@code gemma4} (llama.cpp's BPE vocabulary of Gemma 4, which
 * reads the merges Ollama's file already has) and the token types become those llama.cpp's converter writes
 * ({@link Gemma4TokenTypes}; Ollama's handler leaves its own), the embedded audio encoder, vision tower and projector are left
 * out, and a split-expert file's {@code ffn_gate_inp.per_expert_scale} gets llama.cpp's name. Every kept tensor
 * is the blob's bytes: Ollama's load-time fusion of split expert gate/up tensors is not made, since upstream
 * llama.cpp loads split ones as they are.
 */
public record Gemma4Text() implements DialectHandler {
    private static final String ARCH = "gemma4";
    /** The prefixes {@code handle_gemma4} hides from the text loader, with what they hold. */
    private static final String[][] HIDDEN = {{"a.", "audio encoder (served in mmproj.gguf)"}, {"v.", "vision tower (served in mmproj.gguf)"},
        {"mm.", "projector (served in mmproj.gguf)"}, {"model.vision_tower.", "vision tower under its checkpoint name"}};

    @Override
    public String name() {
        return "gemma4";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    /** {@code detect_ollama_gemma4}: architecture {@code gemma4} and an embedded tower, or Ollama's tokenizer model {@code llama}. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, ARCH) && quirks(g);
    }

    /** The converter quirks of {@code detect_ollama_gemma4}, shared with the clip face. */
    static boolean quirks(GgufFile g) {
        for (String[] h : HIDDEN) {
            if (Markers.anyTensorWithPrefix(g, h[0])) {
                return true;
            }
        }
        return Markers.stringEquals(g, "tokenizer.ggml.model", "llama");
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        if (Markers.stringEquals(g, "tokenizer.ggml.model", "llama")) {
            GgufKv merges = g.kv("tokenizer.ggml.merges");
            if (merges == null || !(merges.value() instanceof GgufArray a) || a.elementType() != GgufValueType.STRING || a.size() == 0) {
                throw new FormatException("no tokenizer.ggml.merges (string array) for Gemma 4's BPE tokenizer");
            }
            e.set("tokenizer.ggml.model", GgufValueType.STRING, "gemma4");
            // Ollama's converter wrote the types: llama.cpp's converter's instead (handle_gemma4 leaves Ollama's)
            e.set("tokenizer.ggml.token_type", GgufValueType.ARRAY, Gemma4TokenTypes.derive(g));
        }
        for (String[] h : HIDDEN) {
            e.dropWithPrefix(h[0], h[1]);
        }
        // handle_gemma4 renames blk.N.ffn_gate_inp.per_expert_scale for N below gemma4.block_count; every block's here
        e.renameSuffix(".ffn_gate_inp.per_expert_scale", ".ffn_down_exps.scale");
        return e.build(name(), face());
    }
}
