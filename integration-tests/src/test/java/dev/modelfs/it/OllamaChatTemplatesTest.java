package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Chat templates of Hugging Face folders (issue 34, docs/SEMANTICS.md "Chat template") on a real mount
 * of a store made by {@code make_chat_template_fixture.py}: a tiny GGUF under every template of
 * {@code chat_templates_corpus.json} (the project's own templates, one per chat format of Ollama's
 * library) and of the legacy form, Go constructs the library does not use, tools, refusals.
 * {@code check_chat_templates.py} loads each folder with {@code AutoTokenizer.from_pretrained} and
 * requires {@code apply_chat_template} to render what Go's own {@code text/template} renders
 * ({@link GoRenderer}) for multi-turn conversations with and without a system prompt, with and without
 * {@code add_generation_prompt}; {@code modelfs show} names the reason of every refusal.
 */
class OllamaChatTemplatesTest {
    static final Path out = Path.of("target", "chat-template-fixture").toAbsolutePath();

    @RegisterExtension
    static final MountedStore mounted = MountedStore.of("modelfs-chat-template-it",
            work -> Fixture.generate(out.getFileName().toString(), "make_chat_template_fixture.py", 300).resolve("store"));

    @Test
    void applyChatTemplateRendersWhatGosTextTemplateRenders() throws Exception {
        mounted.cli().requireChecker(600, "check_chat_templates.py", out.toString(), GoRenderer.binary().toString());
    }

    @Test
    void showNamesWhereTheTemplateComesFromOrWhyThereIsNone() throws Exception {
        String store = out.resolve("store").toString();
        assertEquals("from the Ollama template layer, translated to Jinja", show(store, "chat/chatml"));
        String refused = show(store, "chat/refused-json");
        assertTrue(refused.startsWith("none: the Ollama template is not translated: the function json"), refused);
        JsonNode config = new ObjectMapper().readTree(mounted.cli().mountpoint.resolve("chat/refused-json/tokenizer_config.json").toFile());
        assertTrue(config.has("eos_token") && !config.has("chat_template"), config.toString());
        assertTrue(mounted.cli().log().contains("chat/refused-json:latest: no chat_template in tokenizer_config.json: " + refused.substring(6)),
                "one log line names the refusal");
    }

    private static String show(String store, String model) throws Exception {
        Env.Run r = Env.run(120, CliMount.command("show", "--store", store, "--json", model));
        assertEquals(0, r.exit(), r.output());
        JsonNode j = new ObjectMapper().readTree(r.output().substring(r.output().indexOf('{')));
        return j.path("chat_template").asText();
    }
}
