package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufFile;

/**
 * One handler of Ollama's GGUF dialect (docs/FORMATS.md §12): the markers that recognise a file Ollama's own
 * converter wrote (never the model's name) and the translation of its header for one {@link Face}, following
 * the handler of the same name in Ollama's {@code llama/compat/llama-ollama-compat.cpp}.
 *
 * <p>Invariants: {@link #matches} reads only the header; {@link #translate} is a pure function of the header,
 * either a whole {@link Translation} or a {@link dev.modelfs.format.FormatException} /
 * {@link IllegalArgumentException} saying where the header contradicts itself.
 */
public sealed interface DialectHandler permits Gemma3Text, Gemma3Clip, Llama3Tokenizer, ClipProjectorType, GptOss, Lfm2, Olmo3, Laguna, Qwen3Next,
        SnowflakeCharsmap,
        Qwen35, Qwen35Moe,
        Gemma4Text, Gemma4Clip,
        Mistral3Text, Mistral3Clip,
        Qwen35Clip,
        Qwen25VlText, Qwen25VlClip,
        Qwen3VlText, Qwen3VlClip,
        EmbeddingGemma, Gemma3n,
        Llama4Text, Llama4Clip,
        Glm4MoeLite,
        GlmOcrText, GlmOcrClip,
        NemotronHMoe, NemotronHOmni, NemotronHOmniClip,
        DeepseekOcrText, DeepseekOcrClip {

    /** The name {@code modelfs show} gives the translation (Ollama's handler name). */
    String name();

    Face face();

    /** Whether the header carries this handler's markers. */
    boolean matches(GgufFile g);

    /** The translated header. */
    Translation translate(GgufFile g);

    /**
     * The translation the other GGUF views read (docs/FORMATS.md §12.1): {@link #translate} unless the handler can
     * give one whose every tensor is a slice of the blob by leaving out what it computes (qwen35's MTP head).
     */
    default Translation forViews(GgufFile g) {
        return translate(g);
    }
}
