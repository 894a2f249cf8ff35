package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufFile;
import java.util.List;

/**
 * Detection and dispatch of Ollama's GGUF dialect (docs/FORMATS.md §12, SEMANTICS.md "Ollama's GGUF dialect"):
 * the handlers in the order of Ollama's {@code translate_metadata} / {@code translate_clip_metadata}; the first
 * whose markers match translates the header.
 *
 * <p>Invariants: detection reads only the header and never the model's name; a header no handler matches is
 * {@link Outcome.Untouched}; a matched header that contradicts itself is {@link Outcome.Refused} (never part of
 * a translation); {@code mllama}, which upstream llama.cpp cannot run, is {@link Outcome.NoUpstream}.
 */
public final class Dialects {
    /** Text handlers, in Ollama's dispatch order. */
    private static final List<DialectHandler> TEXT = List.of(
            new EmbeddingGemma(),
            new Gemma3Text(), new Gemma4Text(), new SnowflakeCharsmap(),
            new Gemma3n(),
            new Qwen35Moe(), new Qwen35(),
            new Qwen3Next(), new Laguna(),
            new GptOss(), new Lfm2(), new Olmo3(),
            new Mistral3Text(),
            new Qwen25VlText(),
            new Qwen3VlText(),
            new Glm4MoeLite(),
            new NemotronHOmni(), new NemotronHMoe(),
            new DeepseekOcrText(),
            new Llama3Tokenizer(),
            new Llama4Text(),
            new GlmOcrText());
    /** Clip handlers: the projector-type default first, as {@code translate_clip_metadata} runs it. */
    private static final List<DialectHandler> CLIP = List.of(new ClipProjectorType(), new Gemma3Clip(), new Gemma4Clip(),
            new Mistral3Clip(),
            new Qwen35Clip(),
            new Qwen25VlClip(),
            new Qwen3VlClip(),
            new Llama4Clip(),
            new GlmOcrClip(),
            new NemotronHOmniClip(),
            new DeepseekOcrClip());

    private Dialects() {}

    /** Every handler, text then clip (for documentation and tests). */
    public static List<DialectHandler> handlers() {
        return java.util.stream.Stream.concat(TEXT.stream(), CLIP.stream()).toList();
    }

    /** What {@code model.gguf} of a model layer with this header is. */
    public static Outcome text(GgufFile g) {
        if (Markers.architecture(g, "mllama")) {
            return new Outcome.NoUpstream("mllama", "mllama (llama3.2-vision) has no support in upstream llama.cpp; served as stored");
        }
        return first(TEXT, g);
    }

    /** The text translation the other GGUF views read ({@link DialectHandler#forViews}); otherwise as {@link #text}. */
    public static Outcome textForViews(GgufFile g) {
        if (Markers.architecture(g, "mllama")) {
            return text(g);
        }
        for (DialectHandler h : TEXT) {
            if (h.matches(g)) {
                try {
                    return new Outcome.Translated(h.forViews(g));
                } catch (FormatException | IllegalArgumentException | ArithmeticException | IndexOutOfBoundsException e) {
                    return new Outcome.Refused(h.name(), e.getMessage());
                }
            }
        }
        return new Outcome.Untouched();
    }

    /** What the clip-facing file of a header is: a projector layer's, or the vision tower embedded in a model layer. */
    public static Outcome clip(GgufFile g) {
        return first(CLIP, g);
    }

    private static Outcome first(List<DialectHandler> handlers, GgufFile g) {
        for (DialectHandler h : handlers) {
            if (h.matches(g)) {
                try {
                    return new Outcome.Translated(h.translate(g));
                } catch (FormatException | IllegalArgumentException | ArithmeticException | IndexOutOfBoundsException e) {
                    return new Outcome.Refused(h.name(), e.getMessage());
                }
            }
        }
        return new Outcome.Untouched();
    }
}
