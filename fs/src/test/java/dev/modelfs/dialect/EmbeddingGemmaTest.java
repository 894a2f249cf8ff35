package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Ollama's {@code handle_embeddinggemma} (docs/FORMATS.md §12.6): gemma3 with {@code dense.0.weight} read as gemma-embedding. */
class EmbeddingGemmaTest {
    private static TinyGguf embedding() {
        return new TinyGguf().str("general.architecture", "gemma3").u32("gemma3.block_count", 1).u32("gemma3.pooling_type", 1)
                .kv("gemma3.attention.sliding_window_pattern", GgufValueType.ARRAY, new GgufArray(GgufValueType.BOOL, List.of(true)))
                .kv("gemma3.attention.causal", GgufValueType.BOOL, false).f32("gemma3.rope.freq_base", 1e6f).vocab(8)
                .tensor("token_embd.weight", GgmlType.F16, 16, 8).tensor("norm.weight", GgmlType.F32, 16)
                .tensor("dense.0.weight", GgmlType.F16, 16, 32).tensor("dense.1.weight", GgmlType.F16, 32, 16);
    }

    @Test
    void gemma3WithDenseLayersBecomesGemmaEmbedding() {
        Outcome o = Dialects.text(embedding().header());
        Translation t = assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
        assertEquals("embeddinggemma", t.handler());
        GgufFile h = t.header();
        assertEquals("gemma-embedding", h.kv("general.architecture").value());
        assertEquals(1, h.kv("gemma-embedding.block_count").value());
        assertEquals(1, h.kv("gemma-embedding.pooling_type").value());
        assertEquals(1e6f, h.kv("gemma-embedding.rope.freq_base").value());
        assertEquals(10_000f, h.kv("gemma-embedding.rope.freq_base_swa").value(), "injected when missing");
        assertNull(h.kv("gemma-embedding.attention.causal"));
        assertNull(h.kv("gemma-embedding.attention.sliding_window_pattern"));
        assertNotNull(h.kv("gemma3.block_count"), "rename_kv_prefix copies");
        assertEquals(List.of(16, 32, 32, 16), List.of(h.kv("gemma-embedding.dense_2_feat_in").value(), h.kv("gemma-embedding.dense_2_feat_out").value(),
                h.kv("gemma-embedding.dense_3_feat_in").value(), h.kv("gemma-embedding.dense_3_feat_out").value()));
        assertEquals(GgufValueType.UINT32, h.kv("gemma-embedding.dense_2_feat_in").type());
        assertEquals(List.of("token_embd.weight", "output_norm.weight", "dense_2.weight", "dense_3.weight"),
                h.tensors().stream().map(GgufTensorInfo::name).toList());
        GgufFile src = embedding().header();
        for (GgufTensorInfo ti : h.tensors()) {   // metadata only: every tensor keeps the blob's bytes
            assertTrue(t.ops().isEmpty());
            assertNotNull(ti);
        }
        assertEquals(src.tensor("dense.1.weight").offset(), h.tensor("dense_3.weight").offset());
    }

    @Test
    void plainGemma3IsNotEmbeddingGemma() {
        Outcome o = Dialects.text(TinyGguf.gemma3Dialect().header());
        assertEquals("gemma3", assertInstanceOf(Outcome.Translated.class, o, o::describe).translation().handler());
    }

    @Test
    void aMissingOrMisshapenDenseLayerIsRefused() {
        GgufFile noSecond = new TinyGguf().str("general.architecture", "gemma3").tensor("dense.0.weight", GgmlType.F16, 16, 32).header();
        assertInstanceOf(Outcome.Refused.class, Dialects.text(noSecond));
        GgufFile flat = new TinyGguf().str("general.architecture", "gemma3").tensor("dense.0.weight", GgmlType.F16, 16)
                .tensor("dense.1.weight", GgmlType.F16, 16, 16).header();
        assertInstanceOf(Outcome.Refused.class, Dialects.text(flat));
    }
}
