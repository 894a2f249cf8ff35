package dev.modelfs.hf;

import dev.modelfs.template.JinjaTranslator;
import dev.modelfs.template.TemplateRefusal;

/**
 * The {@code chat_template} of a GGUF model's {@code tokenizer_config.json} (docs/SEMANTICS.md "Chat
 * template"): the GGUF's own {@code tokenizer.chat_template} when it has one, else the model's Ollama
 * template layer translated to Jinja (docs/FORMATS.md §7.9), else none.
 *
 * <p>Invariants: {@code jinja} is null exactly when {@code from} is null; {@code problem} is non-null only
 * when {@code jinja} is null and there was an Ollama template that could not be translated.
 */
public record ChatTemplate(String jinja, String from, String problem) {
    /** Where the template came from. */
    public static final String FROM_GGUF = "the GGUF's tokenizer.chat_template";
    public static final String FROM_OLLAMA = "the Ollama template layer, translated to Jinja";

    static final ChatTemplate NONE = new ChatTemplate(null, null, null);

    /**
     * The template for a GGUF whose {@code tokenizer.chat_template} is {@code gguf} (or null) and whose
     * model has the Ollama template {@code ollama} (or null).
     */
    public static ChatTemplate choose(String gguf, String ollama) {
        if (gguf != null) {
            return new ChatTemplate(gguf, FROM_GGUF, null);
        }
        if (ollama == null) {
            return NONE;
        }
        try {
            return new ChatTemplate(JinjaTranslator.translate(ollama), FROM_OLLAMA, null);
        } catch (TemplateRefusal e) {
            return new ChatTemplate(null, null, "the Ollama template is not translated: " + e.getMessage());
        }
    }

    /** One line for {@code modelfs show}: where the template comes from, or why there is none. */
    public String describe() {
        if (jinja != null) {
            return "from " + from;
        }
        return problem != null ? "none: " + problem : "none: neither a tokenizer.chat_template nor an Ollama template";
    }
}
