package dev.modelfs.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.store.ModelName.PartKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ModelNameTest {

    /** Every row of docs/FORMATS.md §1.4's table, plus the display/directory names docs/DESIGN.md §1 derives. */
    @ParameterizedTest
    @CsvSource({
        "z-image, registry.ollama.ai/library/z-image/latest, z-image:latest, z-image",
        "llama3.2:1b, registry.ollama.ai/library/llama3.2/1b, llama3.2:1b, llama3.2:1b",
        "x/z-image-turbo, registry.ollama.ai/x/z-image-turbo/latest, x/z-image-turbo:latest, x/z-image-turbo",
        "hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M, hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF/Q4_K_M, hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M, hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M",
        "localhost:5000/ns/m, localhost:5000/ns/m/latest, localhost:5000/ns/m:latest, localhost:5000/ns/m",
        "https://registry.ollama.ai/library/qwen3:8b, registry.ollama.ai/library/qwen3/8b, qwen3:8b, qwen3:8b",
    })
    void parsesFormatsTableRows(String input, String manifestPath, String shortest, String dir) {
        ModelName n = ModelName.parse(input).orElseThrow();
        assertEquals(manifestPath, n.manifestPath());
        assertEquals(shortest, n.displayShortest());
        assertEquals(dir, n.directoryPath());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", ":tag", "ns/", "/m", "a//m", "bad name!", "m@sha256:abc", "-lead", "ns.with.dot/m", "m:", "h//ns/m"})
    void rejectsInvalidNames(String input) {
        assertTrue(ModelName.parse(input).isEmpty(), input);
    }

    @Test
    void partRules() {
        assertTrue(ModelName.isValidPart(PartKind.HOST, "localhost:5000"));
        assertFalse(ModelName.isValidPart(PartKind.MODEL, "a:b"));
        assertFalse(ModelName.isValidPart(PartKind.NAMESPACE, "a.b"));
        assertTrue(ModelName.isValidPart(PartKind.MODEL, "a.b"));
        assertTrue(ModelName.isValidPart(PartKind.TAG, "Q4_K_M"));
        assertFalse(ModelName.isValidPart(PartKind.TAG, "x".repeat(81)));
        assertTrue(ModelName.isValidPart(PartKind.HOST, "h".repeat(350)));
        assertFalse(ModelName.isValidPart(PartKind.HOST, "h".repeat(351)));
        assertFalse(ModelName.isValidPart(PartKind.MODEL, ".hidden"));
        assertFalse(ModelName.isValidPart(PartKind.MODEL, ".."));
    }

    @Test
    void comparesCaseInsensitively() {
        assertTrue(ModelName.parse("Llama3:8B").orElseThrow().equalsIgnoreCase(ModelName.parse("llama3:8b").orElseThrow()));
    }
}
