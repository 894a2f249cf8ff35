package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * Llama 3 family files whose tokenizer metadata Ollama's converter left incomplete: Ollama's
 * {@code detect_ollama_llama3_metadata_gap} and {@code handle_llama3_metadata} (docs/FORMATS.md §12.4).
 * Metadata only: the pre-tokenizer named {@code llama-bpe}, end of generation at {@code <|eot_id|>} (128009).
 */
public record Llama3Tokenizer() implements DialectHandler {
    private static final int EOT = 128009;

    @Override
    public String name() {
        return "llama3 tokenizer";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    /** Architecture {@code llama}, {@code <|eot_id|>} at 128009, Llama 3 chat markers, and a missing pre-tokenizer or eos 128001. */
    @Override
    public boolean matches(GgufFile g) {
        if (!Markers.architecture(g, "llama") || !Markers.tokenAt(g, EOT, "<|eot_id|>")) {
            return false;
        }
        boolean chat = Markers.tokenAt(g, 128006, "<|start_header_id|>")
                || Markers.stringContains(g, "tokenizer.chat_template", "<|start_header_id|>")
                || Markers.stringContains(g, "tokenizer.chat_template", "<|eot_id|>");
        return chat && (Markers.stringMissingOrDefault(g, "tokenizer.ggml.pre") || Markers.u32(g, "tokenizer.ggml.eos_token_id") == 128001);
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        if (Markers.stringMissingOrDefault(g, "tokenizer.ggml.pre")) {
            e.set("tokenizer.ggml.pre", GgufValueType.STRING, "llama-bpe");
        }
        long eos = Markers.u32(g, "tokenizer.ggml.eos_token_id");
        if (eos < 0 || eos == 128001) {
            e.set("tokenizer.ggml.eos_token_id", GgufValueType.UINT32, EOT);
        }
        long eot = Markers.u32(g, "tokenizer.ggml.eot_token_id");
        if (eot < 0 || eot == 128001) {
            e.set("tokenizer.ggml.eot_token_id", GgufValueType.UINT32, EOT);
        }
        e.set("tokenizer.ggml.eos_token_ids", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(EOT)));
        return e.build(name(), face());
    }
}
