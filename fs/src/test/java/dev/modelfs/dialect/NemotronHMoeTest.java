package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Ollama's {@code handle_nemotron_h_moe} (docs/FORMATS.md §12.16) on headers laid out as Ollama's
 * {@code convert_nemotron_h.go} writes Nemotron 3 Super (latent MoE projections, an MTP head with one tensor per
 * expert) and as it writes the variants without them.
 */
class NemotronHMoeTest {
    /** A Mamba, an attention and a latent MoE block (hidden 64, latent 32, 4 experts of 32), and an MTP head. */
    static TinyGguf superLike(int latentRows) {
        return new TinyGguf().str("general.architecture", "nemotron_h_moe").u32("nemotron_h_moe.block_count", 3)
                .u32("nemotron_h_moe.embedding_length", 64).vocab(8)
                .tensor("token_embd.weight", GgmlType.F16, 64, 8)
                .tensor("blk.0.ssm_in.weight", GgmlType.F16, 64, 324)
                .tensor("blk.1.attn_q.weight", GgmlType.F16, 64, 64)
                .tensor("blk.2.ffn_latent_in.weight", GgmlType.F16, 64, latentRows)
                .tensor("blk.2.ffn_latent_out.weight", GgmlType.F16, 32, 64)
                .tensor("blk.2.ffn_up_exps.weight", GgmlType.F16, 32, 32, 4)
                .tensor("mtp.layers.0.eh_proj.weight", GgmlType.F16, 128, 64)
                .tensor("mtp.layers.1.ffn_latent_in.weight", GgmlType.F16, 64, 32)
                .tensor("mtp.layers.1.mixer.experts.0.up_proj.weight", GgmlType.F16, 32, 32)
                .tensor("output.weight", GgmlType.F16, 64, 8);
    }

    private static Translation translated(GgufFile g) {
        Outcome o = Dialects.text(g);
        return assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
    }

    private static List<String> names(GgufFile g) {
        return g.tensors().stream().map(GgufTensorInfo::name).toList();
    }

    @Test
    void latentProjectionsRenamedLatentSizeInjectedAndTheMtpHeadLeftOut() {
        GgufFile src = superLike(32).header();
        Translation t = translated(src);
        GgufFile h = t.header();
        assertEquals("nemotron_h_moe", t.handler());
        assertEquals("nemotron_h_moe", h.kv("general.architecture").value());
        assertEquals(GgufValueType.UINT32, h.kv("nemotron_h_moe.moe_latent_size").type());
        assertEquals(32, h.kv("nemotron_h_moe.moe_latent_size").value(), "ffn_latent_in's ne[1]");
        assertEquals(List.of("token_embd.weight", "blk.0.ssm_in.weight", "blk.1.attn_q.weight", "blk.2.ffn_latent_down.weight",
                "blk.2.ffn_latent_up.weight", "blk.2.ffn_up_exps.weight", "output.weight"), names(h));
        assertEquals(src.tensor("blk.2.ffn_latent_in.weight").offset(), h.tensor("blk.2.ffn_latent_down.weight").offset(), "same bytes");
        assertTrue(t.slicesOnly(), "renames and drops only");
        assertEquals(List.of("+nemotron_h_moe.moe_latent_size"), t.keyEdits());
        List<String> changes = t.changes().stream().map(c -> c.kind() + " " + c.from() + " " + c.to()).toList();
        assertTrue(changes.contains("RENAMED blk.2.ffn_latent_in.weight blk.2.ffn_latent_down.weight")
                && changes.contains("RENAMED blk.2.ffn_latent_out.weight blk.2.ffn_latent_up.weight")
                && changes.contains("DROPPED mtp.layers.1.mixer.experts.0.up_proj.weight "), changes.toString());
        assertEquals(3, t.changes().stream().filter(c -> c.kind() == TensorChange.Kind.DROPPED).count());
    }

    @Test
    void anMtpHeadAloneIsEnoughAndAStoredLatentSizeIsKept() {
        GgufFile mtpOnly = new TinyGguf().str("general.architecture", "nemotron_h_moe").vocab(4)
                .tensor("token_embd.weight", GgmlType.F16, 64, 4).tensor("mtp.layers.0.eh_proj.weight", GgmlType.F16, 128, 64).header();
        Translation t = translated(mtpOnly);
        assertEquals(List.of("token_embd.weight"), names(t.header()));
        assertNull(t.header().kv("nemotron_h_moe.moe_latent_size"), "no latent tensors: the key stays absent (n_embd is the MoE width)");
        GgufFile stored = superLike(32).u32("nemotron_h_moe.moe_latent_size", 32).header();
        assertTrue(translated(stored).keyEdits().isEmpty(), "the stored key is kept");
    }

    @Test
    void llamaCppsOwnConversionAndOtherArchitecturesAreLeftAlone() {
        GgufFile upstream = new TinyGguf().str("general.architecture", "nemotron_h_moe").u32("nemotron_h_moe.moe_latent_size", 32).vocab(4)
                .tensor("blk.1.ffn_latent_down.weight", GgmlType.F16, 64, 32).tensor("blk.1.ffn_latent_up.weight", GgmlType.F16, 32, 64).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(upstream));
        GgufFile dense = new TinyGguf().str("general.architecture", "nemotron_h").vocab(4)
                .tensor("mtp.layers.0.eh_proj.weight", GgmlType.F16, 128, 64).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(dense), "nemotron_h has no handler in Ollama's table");
    }

    @Test
    void latentWidthsThatDisagreeAreRefused() {
        Outcome o = Dialects.text(superLike(48).header());   // ffn_latent_out's 32 against the injected 48
        assertTrue(assertInstanceOf(Outcome.Refused.class, o).reason().contains("blk.2.ffn_latent_out.weight has a latent width of 32"), o::describe);
        Outcome stored = Dialects.text(superLike(32).u32("nemotron_h_moe.moe_latent_size", 16).header());
        assertTrue(assertInstanceOf(Outcome.Refused.class, stored).reason().contains("nemotron_h_moe.moe_latent_size is 16"), stored::describe);
        Outcome typed = Dialects.text(superLike(32).f32("nemotron_h_moe.moe_latent_size", 32f).header());
        assertTrue(assertInstanceOf(Outcome.Refused.class, typed).reason().contains("not a UINT32"), typed::describe);
        GgufFile flat = new TinyGguf().str("general.architecture", "nemotron_h_moe").vocab(4)
                .tensor("blk.0.ffn_latent_in.weight", GgmlType.F16, 64, 32, 2).header();
        Outcome f = Dialects.text(flat);
        assertTrue(assertInstanceOf(Outcome.Refused.class, f).reason().contains("not a 2-D latent projection"), f::describe);
    }
}
