package dev.modelfs.template;

/**
 * Why a Go template cannot be translated to Jinja (or does not parse): one sentence, shown by
 * {@code modelfs show} and logged once (docs/SEMANTICS.md "Chat template").
 */
public final class TemplateRefusal extends RuntimeException {
    public TemplateRefusal(String reason) {
        super(reason, null, false, false);
    }
}
