package dev.modelfs.hf;

import static dev.modelfs.hf.HfFolderTest.kv;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.arch.TokenizerTables;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A vocabulary as llama.cpp reads it (docs/SEMANTICS.md "Hugging Face folder of GGUF models"): a special token id outside
 * the vocabulary is ignored, not a reason to leave the tokenizer files out (Ollama's gpt-oss converter writes gpt-oss's
 * own ids whatever the vocabulary), and gpt-oss's {@code gpt-4o} pre-tokenizer is its {@code tokenizer.json} regex.
 */
class GgufVocabTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** HfFolderTest's llama model with the KVs of {@code replace} in place of (or beside) its own. */
    private static GgufFile with(List<GgufKv> replace) {
        GgufFile g = HfFolderTest.model("llama", false, List.of(), List.of());
        List<GgufKv> kvs = new ArrayList<>();
        for (GgufKv k : g.kvs()) {
            if (replace.stream().noneMatch(r -> r.key().equals(k.key()))) {
                kvs.add(k);
            }
        }
        kvs.addAll(replace);
        return new GgufFile(3, 32, kvs, g.tensors(), 4096);
    }

    @Test
    void specialIdsOutsideTheVocabularyAreIgnoredAsLlamaCppDoes() throws Exception {
        GgufFile g = with(List.of(kv("tokenizer.ggml.bos_token_id", GgufValueType.UINT32, 199998),
                kv("tokenizer.ggml.eos_token_id", GgufValueType.UINT32, 199999), kv("tokenizer.ggml.padding_token_id", GgufValueType.UINT32, 3),
                kv("tokenizer.ggml.add_bos_token", GgufValueType.BOOL, false)));
        GgufVocab v = GgufVocab.read(g);
        assertNull(v.bos());
        assertNull(v.eos());
        assertEquals(3, v.pad());
        HfFolder f = HfFolder.of(g);
        assertNotNull(f.tokenizerJson(), f.tokenizerProblem());
        JsonNode c = JSON.readTree(f.config());
        assertTrue(c.get("bos_token_id").isNull() && c.get("eos_token_id").isNull(), c.toString());
        assertEquals(3, c.get("pad_token_id").asInt());
        JsonNode tc = JSON.readTree(f.tokenizerConfig());
        assertTrue(tc.get("eos_token").isNull(), tc.toString());
        assertEquals("<|end|>", tc.get("pad_token").asText());
        assertFalse(tc.get("add_bos_token").asBoolean());
    }

    @Test
    void gpt4oIsGptOssTokenizerJsonRegex() throws Exception {
        var gpt4o = TokenizerTables.PreTokenizer.fromGguf("gpt-4o").orElseThrow();
        assertEquals(gpt4o, TokenizerTables.PreTokenizer.fromHf(gpt4o.toHf()).orElseThrow());
        HfFolder f = HfFolder.of(with(List.of(kv("tokenizer.ggml.pre", GgufValueType.STRING, "gpt-4o"))));
        JsonNode tj = JSON.readTree(f.tokenizerJson());
        assertEquals(gpt4o.hfRegex(), tj.path("pre_tokenizer").path("pretokenizers").path(0).path("pattern").path("Regex").asText());
        assertTrue(tj.path("normalizer").isNull() || tj.path("normalizer").isMissingNode(), "no normalizer: " + tj.path("normalizer"));
        // the splits the tokenizers library (and Python's regex module) makes of this text with that regex
        Matcher m = Pattern.compile(gpt4o.hfRegex()).matcher("HelloWorld DON'T 12345 a/b\n");
        List<String> parts = new ArrayList<>();
        while (m.find()) {
            parts.add(m.group());
        }
        assertEquals(List.of("Hello", "World", " DON'T", " ", "123", "45", " a", "/b", "\n"), parts);
    }
}
