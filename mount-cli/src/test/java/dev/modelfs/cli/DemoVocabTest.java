package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The demo's byte-level BPE: GPT-2's byte token ids, unique tokens, and the Hugging Face tokenizer.json it gives. */
class DemoVocabTest {
    final DemoVocab v = new DemoVocab();

    @Test
    void byteTokensHaveGpt2sIds() {
        // ids of GPT-2's vocab.json: "!" is 0, "Ġ" (the space byte) is 220, "Ċ" (newline) is 198, "Ā" (byte 0) is 188
        assertEquals(0, v.id("!"));
        assertEquals(220, v.id("\u0120"));
        assertEquals(198, v.id("\u010a"));
        assertEquals(188, v.id("\u0100"));
        assertEquals(v.size() - 5, v.id(DemoVocab.BOS), "the five special tokens come last");
    }

    @Test
    void theTokenizerJsonListsEveryTokenOnceAndTheSpecials() throws IOException {
        JsonNode j = new ObjectMapper().readTree(v.tokenizerJson());
        JsonNode vocab = j.get("model").get("vocab");
        Set<Integer> ids = new HashSet<>();
        vocab.properties().forEach(e -> ids.add(e.getValue().asInt()));
        j.get("added_tokens").forEach(t -> ids.add(t.get("id").asInt()));
        assertEquals(v.size(), ids.size(), "every id, once");
        for (int i = 0; i < v.size(); i++) {
            assertTrue(ids.contains(i), "id " + i);
        }
        assertEquals(220, vocab.get("\u0120").asInt());
        boolean bos = false;
        for (JsonNode t : j.get("added_tokens")) {
            bos |= t.get("content").asText().equals(DemoVocab.BOS) && t.get("special").asBoolean();
        }
        assertTrue(bos, "the BOS token is an added special token");
        JsonNode config = new ObjectMapper().readTree(v.tokenizerConfig(128));
        assertEquals(DemoVocab.BOS, config.get("bos_token").isTextual() ? config.get("bos_token").asText() : config.get("bos_token").get("content").asText());
        assertEquals(128, config.get("model_max_length").asLong());
    }
}
