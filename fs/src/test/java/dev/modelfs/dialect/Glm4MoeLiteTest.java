package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Ollama's {@code handle_glm4moelite} (docs/FORMATS.md §12.14) on a header with the keys Ollama's
 * {@code convert_glm4moelite.go} writes for GLM-4.7-Flash (per-head key/value lengths, the absorbed ones under
 * {@code *_mla}): the {@code deepseek2} keys llama.cpp's converter writes for the same model.
 */
class Glm4MoeLiteTest {
    /** GLM-4.7-Flash's attention sizes: qk_nope 192 + qk_rope 64, v_head 256, kv_lora_rank 512. */
    static TinyGguf glm4moelite(GgufValueType eosType, List<Object> eos) {
        return new TinyGguf().str("general.architecture", "glm4moelite").u32("glm4moelite.block_count", 1)
                .u32("glm4moelite.attention.head_count", 20).u32("glm4moelite.attention.head_count_kv", 20)
                .u32("glm4moelite.attention.key_length", 256).u32("glm4moelite.attention.value_length", 256)
                .u32("glm4moelite.attention.kv_lora_rank", 512).u32("glm4moelite.attention.q_lora_rank", 768)
                .u32("glm4moelite.rope.dimension_count", 64).u32("glm4moelite.attention.key_length_mla", 576)
                .u32("glm4moelite.attention.value_length_mla", 512).u32("glm4moelite.expert_count", 4)
                .str("tokenizer.ggml.pre", "default").vocab(8)
                .kv("tokenizer.ggml.eos_token_ids", GgufValueType.ARRAY, new GgufArray(eosType, eos))
                .tensor("token_embd.weight", GgmlType.F16, 16, 8).tensor("blk.0.attn_k_b.weight", GgmlType.F16, 192, 512, 20)
                .tensor("blk.0.attn_v_b.weight", GgmlType.F16, 512, 256, 20);
    }

    private static Translation translated(GgufFile g) {
        Outcome o = Dialects.text(g);
        return assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
    }

    @Test
    void becomesDeepseek2WithTheAbsorbedLengths() {
        GgufFile src = glm4moelite(GgufValueType.INT32, List.of(5, 6, 7)).header();
        Translation t = translated(src);
        GgufFile h = t.header();
        assertEquals("glm4moelite", t.handler());
        assertEquals("deepseek2", h.kv("general.architecture").value());
        assertEquals(1, h.kv("deepseek2.attention.head_count_kv").value());
        assertEquals(576, h.kv("deepseek2.attention.key_length").value());
        assertEquals(512, h.kv("deepseek2.attention.value_length").value());
        assertEquals(256, h.kv("deepseek2.attention.key_length_mla").value());
        assertEquals(256, h.kv("deepseek2.attention.value_length_mla").value());
        assertEquals(20, h.kv("deepseek2.attention.head_count").value(), "copied from glm4moelite.*");
        assertEquals(512, h.kv("deepseek2.attention.kv_lora_rank").value());
        assertEquals(1, h.kv("deepseek2.expert_group_count").value());
        assertEquals(1, h.kv("deepseek2.expert_group_used_count").value());
        assertEquals("glm4", h.kv("tokenizer.ggml.pre").value());
        assertEquals(6, h.kv("tokenizer.ggml.eot_token_id").value());
        assertEquals(7, h.kv("tokenizer.ggml.eom_token_id").value());
        assertEquals(20, h.kv("glm4moelite.attention.head_count_kv").value(), "the source keys stay, as Ollama leaves them");
        assertEquals(src.tensors().stream().map(GgufTensorInfo::name).toList(), h.tensors().stream().map(GgufTensorInfo::name).toList());
        assertTrue(t.slicesOnly(), "metadata only");
    }

    @Test
    void endOfGenerationIdsOnlyWhenMissingAndPresent() {
        GgufFile twoIds = glm4moelite(GgufValueType.UINT32, List.of(5, 6)).header();
        GgufFile h = translated(twoIds).header();
        assertEquals(6, h.kv("tokenizer.ggml.eot_token_id").value());
        assertNull(h.kv("tokenizer.ggml.eom_token_id"), "no third id");
        GgufFile negative = glm4moelite(GgufValueType.INT32, List.of(-1, 5, 6, 7)).header();
        assertEquals(6, translated(negative).header().kv("tokenizer.ggml.eot_token_id").value(), "negative ids skipped");
        GgufFile kept = glm4moelite(GgufValueType.INT32, List.of(5, 6, 7)).u32("tokenizer.ggml.eot_token_id", 3).header();
        assertEquals(3, translated(kept).header().kv("tokenizer.ggml.eot_token_id").value());
    }

    @Test
    void llamaCppsOwnDeepseek2IsLeftAloneAndAWrongTypedLengthIsRefused() {
        GgufFile upstream = new TinyGguf().str("general.architecture", "deepseek2").u32("deepseek2.attention.key_length", 576).vocab(4)
                .tensor("token_embd.weight", GgmlType.F16, 16, 4).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(upstream));
        GgufFile bad = new TinyGguf().str("general.architecture", "glm4moelite").f32("glm4moelite.attention.kv_lora_rank", 512f)
                .u32("glm4moelite.rope.dimension_count", 64).tensor("token_embd.weight", GgmlType.F16, 16, 4).header();
        Outcome o = Dialects.text(bad);
        assertTrue(assertInstanceOf(Outcome.Refused.class, o).reason().contains("kv_lora_rank"), o::describe);
    }
}
