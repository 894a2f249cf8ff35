package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * Mistral 3 (Mistral Small 3.1/3.2, Ministral 3, Devstral) as Ollama's converter writes it
 * ({@code convert/convert_mistral.go}), for llama.cpp's text loader: Ollama's {@code detect_ollama_mistral3} and
 * {@code handle_mistral3} (docs/FORMATS.md §12.2). Metadata only: the YaRN keys the converter wrote under its own
 * names copied to llama.cpp's ({@code rope.scaling.beta_fast} to {@code rope.scaling.yarn_beta_fast} ...,
 * {@code rope.scaling_beta} to {@code attention.temperature_scale}), Mistral's {@code tekken} pre-tokenizer named
 * where the converter left {@code default}, the vision tower and projector ({@code v.*}, {@code mm.*}) left out.
 * The text q/k rows are already in llama.cpp's order (the converter's {@code repack}).
 */
public record Mistral3Text() implements DialectHandler {
    private static final String ARCH = "mistral3";

    @Override
    public String name() {
        return "mistral3";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    /** {@code detect_ollama_mistral3}: architecture {@code mistral3} with embedded vision tensors or the converter's rope keys. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, ARCH) && (Markers.anyTensorWithPrefix(g, "v.") || Markers.anyTensorWithPrefix(g, "mm.")
                || Markers.has(g, "mistral3.rope.scaling.beta_fast") || Markers.has(g, "mistral3.rope.scaling.mscale_all_dim")
                || Markers.has(g, "mistral3.rope.scaling_beta"));
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.copy("mistral3.rope.scaling.beta_fast", "mistral3.rope.scaling.yarn_beta_fast");
        e.copy("mistral3.rope.scaling.beta_slow", "mistral3.rope.scaling.yarn_beta_slow");
        e.copy("mistral3.rope.scaling.mscale_all_dim", "mistral3.rope.scaling.yarn_log_multiplier");
        e.copy("mistral3.rope.scaling_beta", "mistral3.attention.temperature_scale");
        if (Markers.stringMissingOrDefault(g, "tokenizer.ggml.pre")) {
            e.set("tokenizer.ggml.pre", GgufValueType.STRING, "tekken");
        }
        e.dropWithPrefix("v.", "vision tower (served in mmproj.gguf)");
        e.dropWithPrefix("mm.", "projector (served in mmproj.gguf)");
        return e.build(name(), face());
    }
}
