package dev.modelfs.hf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link ChatTemplate}: the GGUF's template first, then the Ollama template translated, else none with the reason. */
class ChatTemplateTest {
    @Test
    void theGgufsOwnTemplateWins() {
        ChatTemplate c = ChatTemplate.choose("{{ messages }}", "{{ .Prompt }}");
        assertEquals("{{ messages }}", c.jinja());
        assertEquals("from " + ChatTemplate.FROM_GGUF, c.describe());
    }

    @Test
    void elseTheOllamaTemplateTranslated() {
        ChatTemplate c = ChatTemplate.choose(null, "{{ range .Messages }}{{ .Content }}{{ end }}");
        assertTrue(c.jinja().contains("for o1 in ollama.msgs"), c.jinja());
        assertEquals(ChatTemplate.FROM_OLLAMA, c.from());
        assertNull(c.problem());
    }

    @Test
    void anUntranslatableTemplateIsLeftOutWithItsReason() {
        ChatTemplate c = ChatTemplate.choose(null, "{{ range .Messages }}{{ json .Content }}{{ end }}");
        assertNull(c.jinja());
        assertTrue(c.describe().startsWith("none: the Ollama template is not translated: the function json"), c.describe());
        assertEquals("none: neither a tokenizer.chat_template nor an Ollama template", ChatTemplate.choose(null, null).describe());
    }
}
