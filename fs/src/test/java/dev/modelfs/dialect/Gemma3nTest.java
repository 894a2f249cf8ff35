package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Ollama's {@code handle_gemma3n} (docs/FORMATS.md §12.6): the multimodal vocabulary cut to the per-layer embedding's rows. */
class Gemma3nTest {
    /** {@code n} tokens: {@code <pad>}, {@code <eos>}, a byte token, an unused one, then plain ones; all typed CONTROL (3). */
    private static TinyGguf gemma3n(int n, int perLayer, GgufArray eos) {
        List<Object> tokens = new ArrayList<>(List.of("<pad>", "<eos>", "<0x41>", "<unused0>"));
        for (int i = tokens.size(); i < n; i++) {
            tokens.add("t" + i);
        }
        TinyGguf t = new TinyGguf().str("general.architecture", "gemma3n").str("tokenizer.ggml.model", "gemma3n")
                .kv("tokenizer.ggml.tokens", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, tokens))
                .kv("tokenizer.ggml.scores", GgufValueType.ARRAY, new GgufArray(GgufValueType.FLOAT32, Collections.nCopies(n, 0f)))
                .kv("tokenizer.ggml.token_type", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, Collections.nCopies(n, 3)));
        if (eos != null) {
            t.kv("tokenizer.ggml.eos_token_ids", GgufValueType.ARRAY, eos);
        }
        return t.tensor("token_embd.weight", GgmlType.F16, 16, n).tensor("per_layer_token_embd.weight", GgmlType.F16, 8, perLayer)
                .tensor("output_norm.weight", GgmlType.F32, 16);
    }

    private static Translation translated(GgufFile g) {
        Outcome o = Dialects.text(g);
        return assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
    }

    @Test
    void theMultimodalVocabularyIsCutToThePerLayerRows() {
        GgufFile src = gemma3n(12, 10, null).header();
        Translation t = translated(src);
        assertEquals("gemma3n", t.handler());
        GgufFile h = t.header();
        assertEquals("llama", h.kv("tokenizer.ggml.model").value());
        assertEquals(10, ((GgufArray) h.kv("tokenizer.ggml.tokens").value()).size());
        assertEquals(10, ((GgufArray) h.kv("tokenizer.ggml.scores").value()).size());
        List<Object> types = ((GgufArray) h.kv("tokenizer.ggml.token_type").value()).values();
        assertEquals(List.of(3, 3, 6, 1, 3, 3, 3, 3, 3, 3), types);
        assertEquals(List.of(1, 106), ((GgufArray) h.kv("tokenizer.ggml.eos_token_ids").value()).values());
        assertEquals(List.of(16L, 10L), List.of(h.tensor("token_embd.weight").ne()[0], h.tensor("token_embd.weight").ne()[1]));
        assertEquals(src.tensor("token_embd.weight").offset(), h.tensor("token_embd.weight").offset(), "a prefix of the stored rows");
        assertTrue(t.ops().isEmpty(), "no data computed");
        assertEquals(TensorChange.Kind.COMPUTED, t.changes().getFirst().kind());
        assertEquals(src.tensor("per_layer_token_embd.weight").offset(), h.tensor("per_layer_token_embd.weight").offset());
    }

    @Test
    void noSpacePrefixUnlessTheFileSaysOtherwise() {
        assertEquals(false, translated(gemma3n(12, 10, null).header()).header().kv(Gemma3n.ADD_SPACE_PREFIX).value());
        GgufFile said = gemma3n(12, 10, null).kv(Gemma3n.ADD_SPACE_PREFIX, GgufValueType.BOOL, true).header();
        assertEquals(true, translated(said).header().kv(Gemma3n.ADD_SPACE_PREFIX).value(), "a stored value is kept");
    }

    @Test
    void endOfTurnJoinsTheStoredEosIdsOnce() {
        Translation t = translated(gemma3n(12, 10, new GgufArray(GgufValueType.UINT32, List.of(1))).header());
        GgufArray eos = (GgufArray) t.header().kv("tokenizer.ggml.eos_token_ids").value();
        assertEquals(GgufValueType.UINT32, eos.elementType());
        assertEquals(List.of(1, 106), eos.values());
        Translation again = translated(gemma3n(12, 10, new GgufArray(GgufValueType.INT32, List.of(106, 1))).header());
        assertEquals(List.of(106, 1), ((GgufArray) again.header().kv("tokenizer.ggml.eos_token_ids").value()).values());
    }

    @Test
    void equalRowCountsAreLlamaCppsFormAndMoreRowsAreRefused() {
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(gemma3n(10, 10, null).header()));
        Outcome grown = Dialects.text(gemma3n(10, 12, null).header());
        assertEquals("gemma3n", assertInstanceOf(Outcome.Refused.class, grown).handler());
    }
}
