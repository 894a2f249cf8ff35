package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufTensorInfo;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Ollama's {@code handle_nemotron_h_omni} (docs/FORMATS.md §12.17) on headers laid out as Ollama's
 * {@code convert_nemotron_h.go} writes Nemotron 3 Omni ({@code nemotronHNanoVLModel}: text, RADIO vision tower, Parakeet
 * audio encoder and projectors in one file).
 */
class NemotronHOmniTest {
    static TinyGguf omni(int experts) {
        return new TinyGguf().str("general.architecture", "nemotron_h_omni").u32("nemotron_h_omni.block_count", 2)
                .u32("nemotron_h_omni.embedding_length", 64).u32("nemotron_h_omni.expert_count", experts)
                .u32("nemotron_h_omni.vision.block_count", 32).u32("nemotron_h_omni.audio.block_count", 24).vocab(8)
                .tensor("token_embd.weight", GgmlType.F16, 64, 8)
                .tensor("blk.0.ssm_in.weight", GgmlType.F16, 64, 324)
                .tensor("blk.1.ffn_up_exps.weight", GgmlType.F16, 64, 32, 4)
                .tensor("a.blk.0.attn_q.weight", GgmlType.F16, 32, 32)
                .tensor("v.blk.0.attn_q.weight", GgmlType.F16, 32, 32)
                .tensor("v.patch_embd.weight", GgmlType.F16, 768, 32)
                .tensor("mm.1.weight", GgmlType.F16, 128, 64)
                .tensor("mm.a.1.weight", GgmlType.F16, 32, 64)
                .tensor("output.weight", GgmlType.F16, 64, 8);
    }

    private static Translation translated(GgufFile g) {
        Outcome o = Dialects.text(g);
        return assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
    }

    @Test
    void theTextSideBecomesNemotronHMoeWithTheTowersLeftOut() {
        Translation t = translated(omni(4).header());
        GgufFile h = t.header();
        assertEquals("nemotron_h_omni", t.handler());
        assertEquals("nemotron_h_moe", h.kv("general.architecture").value());
        assertEquals(2, h.kv("nemotron_h_moe.block_count").value());
        assertEquals(4, h.kv("nemotron_h_moe.expert_count").value());
        assertNull(h.kv("nemotron_h_moe.vision.block_count"), "vision keys are not copied");
        assertNull(h.kv("nemotron_h_moe.audio.block_count"), "audio keys are not copied");
        assertEquals(32, h.kv("nemotron_h_omni.vision.block_count").value(), "the source keys stay");
        assertEquals(List.of("token_embd.weight", "blk.0.ssm_in.weight", "blk.1.ffn_up_exps.weight", "output.weight"),
                h.tensors().stream().map(GgufTensorInfo::name).toList());
        assertTrue(t.slicesOnly());
    }

    @Test
    void noExpertsIsDenseNemotronHAndMoeFixesApplyWithExperts() {
        GgufFile dense = translated(omni(0).header()).header();
        assertEquals("nemotron_h", dense.kv("general.architecture").value());
        assertEquals(2, dense.kv("nemotron_h.block_count").value());
        GgufFile latent = omni(4).tensor("blk.1.ffn_latent_in.weight", GgmlType.F16, 64, 32)
                .tensor("mtp.layers.0.eh_proj.weight", GgmlType.F16, 128, 64).header();
        Translation t = translated(latent);
        assertEquals(32, t.header().kv("nemotron_h_moe.moe_latent_size").value());
        assertTrue(t.header().tensor("blk.1.ffn_latent_down.weight") != null && t.header().tensor("mtp.layers.0.eh_proj.weight") == null);
    }

    @Test
    void withoutTowersItIsLeftAloneAndDisagreeingLatentWidthsAreRefused() {
        GgufFile textOnly = new TinyGguf().str("general.architecture", "nemotron_h_omni").vocab(4)
                .tensor("token_embd.weight", GgmlType.F16, 64, 4).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(textOnly));
        GgufFile bad = omni(4).u32("nemotron_h_omni.moe_latent_size", 16).tensor("blk.1.ffn_latent_in.weight", GgmlType.F16, 64, 32).header();
        Outcome o = Dialects.text(bad);
        assertTrue(assertInstanceOf(Outcome.Refused.class, o).reason().contains("moe_latent_size is 16"), o::describe);
    }
}
