package dev.modelfs.dialect;

/**
 * What {@link Dialects} decided for one GGUF header and one {@link Face} (docs/SEMANTICS.md "Ollama's GGUF
 * dialect"): the closed family the views and {@code modelfs show} receive.
 */
public sealed interface Outcome {

    /** No handler's markers match: the blob is served as it is. */
    record Untouched() implements Outcome {}

    /** A handler matched and translated the header. */
    record Translated(Translation translation) implements Outcome {}

    /**
     * A handler matched but the header contradicts itself (a missing companion tensor, a shape that does not
     * fit): the blob is served untranslated; {@code reason} is the one log line.
     */
    record Refused(String handler, String reason) implements Outcome {}

    /** An architecture upstream llama.cpp cannot run at all (llama3.2-vision's {@code mllama}); served as it is. */
    record NoUpstream(String architecture, String reason) implements Outcome {}

    /** One line for {@code modelfs show}. */
    default String describe() {
        return switch (this) {
            case Untouched _ -> "none (served as stored)";
            case Translated t -> t.translation().handler() + ": " + t.translation().summary();
            case Refused r -> "none: " + r.handler() + " markers matched but " + r.reason() + " (served as stored)";
            case NoUpstream n -> "none: " + n.reason();
        };
    }
}
