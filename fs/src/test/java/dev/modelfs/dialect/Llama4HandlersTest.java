package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufTensorInfo;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Ollama's {@code handle_llama4} / {@code handle_llama4_clip} (docs/FORMATS.md §12.13) on a header laid out as Ollama's
 * {@code convert_llama4.go} writes it: the text face without the vision tower, the clip face a {@code llama4} projector
 * under llama.cpp's names, and llama.cpp's own conversion left alone.
 */
class Llama4HandlersTest {
    /** One text block (MoE) and one vision block, the names Ollama's Replacements() give them. */
    static TinyGguf llama4Dialect(boolean ratio) {
        TinyGguf g = new TinyGguf().str("general.architecture", "llama4").u32("llama4.block_count", 1)
                .u32("llama4.embedding_length", 16).u32("llama4.vision.block_count", 1).u32("llama4.vision.embedding_length", 8)
                .u32("llama4.vision.feed_forward_length", 16).u32("llama4.vision.attention.head_count", 2)
                .u32("llama4.vision.image_size", 32).u32("llama4.vision.patch_size", 8).f32("llama4.vision.layer_norm_epsilon", 1e-5f)
                .str("tokenizer.ggml.pre", "default").vocab(8);
        if (ratio) {
            g.f32("llama4.vision.pixel_shuffle_ratio", 0.25f);
        }
        return g.tensor("token_embd.weight", GgmlType.F16, 16, 8).tensor("blk.0.ffn_gate_exps.weight", GgmlType.F16, 16, 8, 2)
                .tensor("output_norm.weight", GgmlType.F32, 16)
                .tensor("v.class_embedding", GgmlType.F32, 8).tensor("v.patch_embedding.weight", GgmlType.F16, 192, 8)
                .tensor("v.positional_embedding_vlm", GgmlType.F16, 8, 17).tensor("v.layernorm_pre.weight", GgmlType.F32, 8)
                .tensor("v.layernorm_post.weight", GgmlType.F32, 8)
                .tensor("v.blk.0.attn_norm.weight", GgmlType.F32, 8).tensor("v.blk.0.attn_output.weight", GgmlType.F16, 8, 8)
                .tensor("v.blk.0.ffn_norm.weight", GgmlType.F32, 8).tensor("v.blk.0.mlp.fc1.weight", GgmlType.F16, 8, 16)
                .tensor("v.blk.0.mlp.fc2.weight", GgmlType.F16, 16, 8)
                .tensor("v.vision_adapter.mlp.fc1.weight", GgmlType.F16, 32, 16).tensor("v.vision_adapter.mlp.fc2.weight", GgmlType.F16, 16, 16)
                .tensor("mm.linear_1.weight", GgmlType.F16, 16, 16);
    }

    private static Translation translated(Outcome o) {
        return assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
    }

    private static List<String> names(Translation t) {
        return t.header().tensors().stream().map(GgufTensorInfo::name).toList();
    }

    @Test
    void textFaceHidesTheVisionTowerAndNamesLlama4sPreTokenizer() {
        Translation t = translated(Dialects.text(llama4Dialect(true).header()));
        assertEquals("llama4", t.handler());
        assertEquals(List.of("token_embd.weight", "blk.0.ffn_gate_exps.weight", "output_norm.weight"), names(t));
        assertEquals("llama4", t.header().kv("tokenizer.ggml.pre").value());
        assertEquals("llama4", t.header().kv("general.architecture").value());
        assertTrue(t.slicesOnly());
    }

    @Test
    void clipFaceIsALlama4ProjectorUnderLlamaCppsNames() {
        Translation t = translated(Dialects.clip(llama4Dialect(true).header()));
        GgufFile h = t.header();
        assertEquals("llama4 (clip)", t.handler());
        assertEquals("clip", h.kv("general.architecture").value());
        assertEquals("llama4", h.kv("clip.projector_type").value());
        assertEquals("llama4", h.kv("clip.vision.projector_type").value());
        assertEquals(4, h.kv("clip.vision.projector.scale_factor").value(), "round(1 / 0.25)");
        assertEquals(16, h.kv("clip.vision.projection_dim").value());
        assertEquals(1e-5f, h.kv("clip.vision.attention.layer_norm_epsilon").value());
        assertEquals(new GgufArray(dev.modelfs.format.gguf.GgufValueType.FLOAT32, List.of(0.5f, 0.5f, 0.5f)), h.kv("clip.vision.image_mean").value());
        assertEquals(true, h.kv("clip.use_gelu").value());
        assertTrue(h.kvs().stream().noneMatch(kv -> kv.key().startsWith("llama4.") || kv.key().startsWith("tokenizer.")));
        assertEquals(List.of("v.class_embd", "v.patch_embd.weight", "v.position_embd.weight", "v.pre_ln.weight", "v.post_ln.weight",
                "v.blk.0.ln1.weight", "v.blk.0.attn_out.weight", "v.blk.0.ln2.weight", "v.blk.0.ffn_up.weight", "v.blk.0.ffn_down.weight",
                "mm.model.mlp.1.weight", "mm.model.mlp.2.weight", "mm.model.fc.weight"), names(t));
        assertTrue(t.slicesOnly(), "nothing computed: every tensor is the blob's bytes");
        assertEquals(2, translated(Dialects.clip(llama4Dialect(false).header())).header().kv("clip.vision.projector.scale_factor").value(),
                "2 without a pixel-shuffle ratio");
    }

    @Test
    void llamaCppsOwnConversionAndBrokenHeadersAreNotTranslated() {
        GgufFile upstream = new TinyGguf().str("general.architecture", "llama4").str("tokenizer.ggml.pre", "llama4").vocab(4)
                .tensor("token_embd.weight", GgmlType.F16, 16, 4).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(upstream));
        assertInstanceOf(Outcome.Untouched.class, Dialects.clip(upstream));
        GgufFile noVisionKeys = new TinyGguf().str("general.architecture", "llama4").u32("llama4.embedding_length", 16)
                .tensor("token_embd.weight", GgmlType.F16, 16, 4).tensor("v.patch_embedding.weight", GgmlType.F16, 192, 8).header();
        Outcome o = Dialects.clip(noVisionKeys);
        assertTrue(assertInstanceOf(Outcome.Refused.class, o).reason().contains("clip.vision.block_count"), o::describe);
        GgufFile badRatio = new TinyGguf().str("general.architecture", "llama4").u32("llama4.vision.pixel_shuffle_ratio", 2)
                .tensor("v.patch_embedding.weight", GgmlType.F16, 192, 8).header();
        assertInstanceOf(Outcome.Refused.class, Dialects.clip(badRatio));
    }
}
