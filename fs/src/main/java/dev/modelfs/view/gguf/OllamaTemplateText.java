package dev.modelfs.view.gguf;

import dev.modelfs.store.Layer;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.MediaType.Kind;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The text of a model's Ollama template: its last template layer, else its last (legacy) prompt layer,
 * the same layer {@code ollama/template} shows (docs/SEMANTICS.md "Chat template"). Read once while the
 * model directory is built; a template is a small text blob.
 */
final class OllamaTemplateText {
    /** Templates longer than this are not read (the translator refuses them anyway). */
    static final int MAX_BYTES = 1 << 20;

    private OllamaTemplateText() {}

    /** The template, or null when the model has none. @throws IOException when the layer cannot be read */
    static String of(OllamaStore store, Manifest m) throws IOException {
        Layer l = last(m, Kind.TEMPLATE);
        if (l == null) {
            l = last(m, Kind.PROMPT);
        }
        if (l == null || l.digest().isEmpty()) {
            return null;
        }
        return new String(store.readSmallBlob(l.digest().get(), MAX_BYTES), StandardCharsets.UTF_8);
    }

    private static Layer last(Manifest m, Kind k) {
        List<Layer> ls = m.layers(k);
        return ls.isEmpty() ? null : ls.getLast();
    }
}
