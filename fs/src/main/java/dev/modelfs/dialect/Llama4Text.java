package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * Llama 4 (Scout, Maverick) as Ollama's converter writes it ({@code convert/convert_llama4.go}), for llama.cpp's text
 * loader: Ollama's {@code detect_ollama_llama4} and {@code handle_llama4} (docs/FORMATS.md §12.13). The text keys and
 * tensor names already are llama.cpp's; the vision tower and projector embedded in the same file ({@code v.*},
 * {@code mm.*}) are left out so the tensor count is the text model's.
 *
 * <p>One edit beyond Ollama's: {@code tokenizer.ggml.pre = llama4} when the file says {@code default} or nothing.
 * Ollama's converter knows no hash of Llama 4's pre-tokenizer and writes {@code default}, with which llama.cpp
 * splits text by its generic expression rather than Llama 4's; architecture {@code llama4} always carries Llama 4's
 * vocabulary.
 */
public record Llama4Text() implements DialectHandler {
    static final String ARCH = "llama4";

    @Override
    public String name() {
        return "llama4";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    /** {@code detect_ollama_llama4}: architecture {@code llama4} and a tensor named {@code v.*} or {@code mm.*}. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, ARCH) && (Markers.anyTensorWithPrefix(g, "v.") || Markers.anyTensorWithPrefix(g, "mm."));
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        if (Markers.stringMissingOrDefault(g, "tokenizer.ggml.pre")) {
            e.set("tokenizer.ggml.pre", GgufValueType.STRING, "llama4");
        }
        e.dropWithPrefix("v.", "vision tower (served in mmproj.gguf)");
        e.dropWithPrefix("mm.", "projector (served in mmproj.gguf)");
        return e.build(name(), face());
    }
}
