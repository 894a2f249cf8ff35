package dev.modelfs.hf;

import static dev.modelfs.hf.HfFolderTest.kv;
import static dev.modelfs.hf.HfFolderTest.model;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The chat_template of tokenizer_config.json (docs/SEMANTICS.md "Chat template"): GGUF's, else Ollama's translated, else none with a reason. */
class HfFolderChatTemplateTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String OLLAMA = "{{ range .Messages }}<|{{ .Role }}|>{{ .Content }}{{ end }}<|assistant|>";

    @Test
    void theOllamaTemplateIsTranslatedWhenTheGgufHasNone() throws Exception {
        HfFolder f = HfFolder.of(model("llama", false, List.of(), List.of()), null, OLLAMA);
        JsonNode tc = JSON.readTree(f.tokenizerConfig());
        assertTrue(tc.get("chat_template").asText().contains("{%+ for o1 in ollama.msgs +%}<|{{ o1['role'] }}|>"), tc.toString());
        assertEquals(ChatTemplate.FROM_OLLAMA, f.chatTemplate().from());
        assertSame(f, f.withUnreadableTemplate("ignored: there is a template"));
    }

    @Test
    void theGgufsOwnTemplateWinsAndNoneIsWrittenWithoutEither() throws Exception {
        HfFolder own = HfFolder.of(model("llama", false, List.of(), List.of(kv("tokenizer.chat_template", GgufValueType.STRING, "{{ x }}"))),
                null, OLLAMA);
        assertEquals("{{ x }}", JSON.readTree(own.tokenizerConfig()).get("chat_template").asText());
        HfFolder none = HfFolder.of(model("llama", false, List.of(), List.of()));
        assertFalse(JSON.readTree(none.tokenizerConfig()).has("chat_template"));
        assertEquals("the Ollama template layer cannot be read: too big", none.withUnreadableTemplate("too big").chatTemplate().problem());
    }

    @Test
    void anUntranslatableTemplateIsLeftOutWithTheReason() throws Exception {
        HfFolder f = HfFolder.of(model("llama", false, List.of(), List.of()), null, "{{ range .Messages }}{{ json . }}{{ end }}");
        assertFalse(JSON.readTree(f.tokenizerConfig()).has("chat_template"));
        assertTrue(f.chatTemplate().describe().contains("the function json"), f.chatTemplate().describe());
        assertEquals(9, f.tensors().size(), "the rest of the folder is unchanged");
    }
}
