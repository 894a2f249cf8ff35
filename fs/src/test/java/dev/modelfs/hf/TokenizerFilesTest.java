package dev.modelfs.hf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;
import org.junit.jupiter.api.Test;

class TokenizerFilesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void byteLevelVocabularyKeepsIdsMergesAndSpecials() throws Exception {
        GgufVocab v = new GgufVocab("gpt2", "qwen2", List.of("a", "Ġ", "Ġa", "<|im_end|>", "<think>"),
                new int[] {1, 1, 1, 3, 4}, new float[5], List.of("Ġ a"), null, 3, null, null, false, false, false, "{{x}}");
        JsonNode t = JSON.readTree(TokenizerFiles.tokenizerJson(v));
        assertEquals(2, t.at("/model/vocab/Ġa").asInt());
        assertEquals("Ġ", t.at("/model/merges/0/0").asText());
        assertEquals("a", t.at("/model/merges/0/1").asText());
        assertEquals("NFC", t.at("/normalizer/type").asText());
        assertEquals("Split", t.at("/pre_tokenizer/pretokenizers/0/type").asText());
        assertEquals(2, t.get("added_tokens").size());
        assertTrue(t.at("/added_tokens/0/special").asBoolean());
        assertFalse(t.at("/added_tokens/1/special").asBoolean(), "user-defined tokens are not special");
        assertEquals("ByteLevel", t.at("/post_processor/type").asText(), "no bos: no template");
        JsonNode c = JSON.readTree(TokenizerFiles.tokenizerConfig(v, 4096L));
        assertEquals("<|im_end|>", c.get("eos_token").asText());
        assertTrue(c.get("bos_token").isNull());
        assertEquals("{{x}}", c.get("chat_template").asText());
        assertEquals(4096, c.get("model_max_length").asInt());
    }

    @Test
    void sentencePieceVocabularyUsesByteFallbackAndTheLegacySpacePrefix() throws Exception {
        GgufVocab v = new GgufVocab("llama", "default", List.of("<unk>", "<s>", "</s>", "<0x41>", "▁", "a", "▁a"),
                new int[] {2, 3, 3, 6, 1, 1, 1}, new float[] {0, 0, 0, 0, -4, -5, -6}, null, 1, 2, 0, null, true, false, true, null);
        JsonNode t = JSON.readTree(TokenizerFiles.tokenizerJson(v));
        assertTrue(t.at("/model/byte_fallback").asBoolean());
        assertEquals("<unk>", t.at("/model/unk_token").asText());
        assertEquals("Prepend", t.at("/normalizer/normalizers/0/type").asText());
        assertEquals("TemplateProcessing", t.at("/post_processor/type").asText());
        assertEquals("<s>", t.at("/post_processor/single/0/SpecialToken/id").asText());
        assertEquals("▁", t.at("/model/merges/0/0").asText(), "the only merge: ▁ + a");
        assertEquals(1, t.at("/model/merges").size());
        assertEquals(3, t.get("added_tokens").size());
    }

    @Test
    void gemma4VocabularyIsSentencePieceStyleBpeWithItsMergesNoSpacePrefixAndAlwaysBos() throws Exception {
        GgufVocab v = new GgufVocab("gemma4", "gemma4", List.of("<pad>", "<eos>", "<bos>", "<0x41>", "▁", "a", "▁a"),
                new int[] {3, 3, 3, 6, 1, 1, 1}, new float[7], List.of("▁ a"), 2, 1, null, 0, true, false, false, null);
        assertTrue(v.spm());
        JsonNode t = JSON.readTree(TokenizerFiles.tokenizerJson(v));
        assertTrue(t.at("/model/byte_fallback").asBoolean());
        assertEquals("Replace", t.at("/normalizer/normalizers/0/type").asText(), "no space prefix");
        assertEquals(1, t.at("/normalizer/normalizers").size());
        assertEquals("<bos>", t.at("/post_processor/single/0/SpecialToken/id").asText());
        assertEquals(List.of("▁", "a"), List.of(t.at("/model/merges/0/0").asText(), t.at("/model/merges/0/1").asText()));
    }

    @Test
    void gemma4VocabularyReadsAsLlamaCppReadsIt() {
        List<GgufKv> kvs = new java.util.ArrayList<>(List.of(HfFolderTest.kv("tokenizer.ggml.model", GgufValueType.STRING, "gemma4"),
                HfFolderTest.strings("tokenizer.ggml.tokens", List.of("<pad>", "<eos>", "<bos>", "a")),
                HfFolderTest.kv("tokenizer.ggml.add_bos_token", GgufValueType.BOOL, false),
                HfFolderTest.kv("tokenizer.ggml.add_space_prefix", GgufValueType.BOOL, true)));
        HfUnsupported noMerges = assertThrows(HfUnsupported.class, () -> GgufVocab.read(new GgufFile(3, 32, kvs, List.of(), 4096)));
        assertTrue(noMerges.getMessage().contains("gemma4 vocabulary without tokenizer.ggml.merges"), noMerges.getMessage());
        kvs.add(HfFolderTest.strings("tokenizer.ggml.merges", List.of("a a")));
        GgufVocab v = GgufVocab.read(new GgufFile(3, 32, kvs, List.of(), 4096));
        assertTrue(v.spm());
        assertTrue(v.addBos(), "llama.cpp adds BOS to every Gemma 4 prompt");
        assertFalse(v.addSpacePrefix(), "llama.cpp's Gemma 4 BPE vocabulary never prefixes a space");
        assertEquals(List.of("a a"), v.merges());
    }

    @Test
    void mergesFromScoresRankByPieceScoreThenLongerLeftPiece() {
        // pieces: a b c ab bc abc; abc splits as a+bc and ab+c (same score: longer left piece first)
        List<String[]> m = SpmMerges.derive(List.of("a", "b", "c", "ab", "bc", "abc"), new float[] {0, 0, 0, -2, -1, -3});
        assertEquals(List.of("b c", "a b", "ab c", "a bc"), m.stream().map(x -> x[0] + " " + x[1]).toList());
    }
}
