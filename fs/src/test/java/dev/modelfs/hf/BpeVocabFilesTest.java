package dev.modelfs.hf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** vocab.json and merges.txt as transformers' save_vocabulary writes them, from both merges spellings of tokenizer.json. */
class BpeVocabFilesTest {
    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String s(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    @Test
    void pairMergesAndStringMergesGiveTheSameFiles() {
        String vocab = "{\"a\":0,\"Ġ\":1,\"é\":2,\"Ġa\":3,\"Ġaé\":4}";
        for (String merges : new String[] {"[[\"Ġ\",\"a\"],[\"Ġa\",\"é\"]]", "[\"Ġ a\",\"Ġa é\"]"}) {
            var model = BpeVocabFiles.bpeModel(b("{\"version\":\"1.0\",\"model\":{\"type\":\"BPE\",\"dropout\":null,\"vocab\":"
                    + vocab + ",\"merges\":" + merges + "}}"));
            assertEquals(vocab, s(BpeVocabFiles.vocabJson(model)));
            assertEquals("#version: 0.2\nĠ a\nĠa é\n", s(BpeVocabFiles.mergesTxt(model)));
        }
    }

    @Test
    void otherModelsAndBrokenMergesAreRefused() {
        assertThrows(HfUnsupported.class, () -> BpeVocabFiles.bpeModel(b("{\"model\":{\"type\":\"Unigram\",\"vocab\":[]}}")));
        assertThrows(HfUnsupported.class, () -> BpeVocabFiles.bpeModel(b("{\"model\":")));
        var bad = BpeVocabFiles.bpeModel(b("{\"model\":{\"type\":\"BPE\",\"vocab\":{},\"merges\":[[\"a\"]]}}"));
        assertThrows(HfUnsupported.class, () -> BpeVocabFiles.mergesTxt(bad));
    }
}
