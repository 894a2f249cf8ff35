package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Ollama's {@code handle_deepseekocr} / {@code handle_deepseekocr_clip} (docs/FORMATS.md §12.18) on a header laid out as
 * Ollama's {@code convert_deepseekocr.go} writes it: the text face a {@code deepseek2-ocr} model with the expert keys
 * derived from the tensor shapes and without the SAM / CLIP / projector tensors; the clip face a {@code deepseekocr}
 * projector under llama.cpp's names; llama.cpp's own conversion and self-contradicting headers left alone.
 */
class DeepseekOcrTest {
    /** One dense block, one MoE block (4 experts of 32, 2 shared experts), a SAM block, a CLIP block, the projector. */
    static TinyGguf deepseekocr(boolean withExperts) {
        TinyGguf g = new TinyGguf().str("general.architecture", "deepseekocr")
                .u32("deepseekocr.attention.head_count", 4).u32("deepseekocr.attention.head_count_kv", 4).u32("deepseekocr.block_count", 2)
                .u32("deepseekocr.context_length", 8192).u32("deepseekocr.embedding_length", 64).u32("deepseekocr.expert_count", 4)
                .u32("deepseekocr.expert_used_count", 2).u32("deepseekocr.feed_forward_length", 96)
                .u32("deepseekocr.leading_dense_block_count", 1)
                .u32("deepseekocr.sam.block_count", 1).u32("deepseekocr.sam.embedding_length", 32).u32("deepseekocr.sam.head_count", 2)
                .kv("deepseekocr.sam.global_attention_indexes", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(2, 5, 8, 11)))
                .u32("deepseekocr.vision.block_count", 1).u32("deepseekocr.vision.embedding_length", 32)
                .u32("deepseekocr.vision.head_count", 16).u32("deepseekocr.vision.image_size", 224).u32("deepseekocr.vision.patch_size", 14)
                .vocab(8)
                .tensor("mm.image_newline", GgmlType.F32, 64).tensor("mm.layers.bias", GgmlType.F32, 64)
                .tensor("mm.layers.weight", GgmlType.F16, 64, 64).tensor("mm.view_seperator", GgmlType.F32, 64)
                .tensor("output.weight", GgmlType.F16, 64, 8).tensor("output_norm.weight", GgmlType.F32, 64)
                .tensor("s.blk.0.attn.proj.weight", GgmlType.F16, 32, 32).tensor("s.blk.0.attn.qkv.weight", GgmlType.F16, 32, 96)
                .tensor("s.blk.0.attn.rel_pos_h", GgmlType.F32, 16, 27).tensor("s.blk.0.attn.rel_pos_w", GgmlType.F32, 16, 27)
                .tensor("s.blk.0.mlp.lin1.weight", GgmlType.F16, 32, 128).tensor("s.blk.0.norm1.weight", GgmlType.F32, 32)
                .tensor("s.blk.0.norm2.weight", GgmlType.F32, 32).tensor("s.neck.0.weight", GgmlType.F16, 1, 1, 32, 16)
                .tensor("s.net_2.weight", GgmlType.F16, 3, 3, 16, 16).tensor("s.net_3.weight", GgmlType.F16, 3, 3, 16, 32)
                .tensor("s.patch_embd.weight", GgmlType.F16, 16, 16, 3, 32).tensor("s.position_embd", GgmlType.F32, 32, 64, 64, 1)
                .tensor("token_embd.weight", GgmlType.F16, 64, 8)
                .tensor("v.blk.0.layer_norm1.weight", GgmlType.F32, 32).tensor("v.blk.0.layer_norm2.weight", GgmlType.F32, 32)
                .tensor("v.blk.0.mlp.fc1.weight", GgmlType.F16, 32, 128).tensor("v.blk.0.mlp.fc2.weight", GgmlType.F16, 128, 32)
                .tensor("v.blk.0.self_attn.out_proj.weight", GgmlType.F16, 32, 32).tensor("v.blk.0.self_attn.qkv_proj.weight", GgmlType.F16, 32, 96)
                .tensor("v.class_embd", GgmlType.F32, 32).tensor("v.patch_embd.weight", GgmlType.F16, 14, 14, 3, 32)
                .tensor("v.position_embd.weight", GgmlType.F32, 32, 257).tensor("v.pre_layrnorm.weight", GgmlType.F32, 32)
                .tensor("blk.0.attn_q.weight", GgmlType.F16, 64, 64).tensor("blk.0.ffn_down.weight", GgmlType.F16, 96, 64);
        if (withExperts) {
            g.tensor("blk.1.ffn_down_exps.weight", GgmlType.F16, 32, 64, 4).tensor("blk.1.ffn_down_shexp.weight", GgmlType.F16, 64, 64)
                    .tensor("blk.1.ffn_gate_inp.weight", GgmlType.F32, 64, 4);
        }
        return g;
    }

    private static Translation translated(Outcome o) {
        return assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
    }

    private static List<String> names(Translation t) {
        return t.header().tensors().stream().map(GgufTensorInfo::name).toList();
    }

    @Test
    void textFaceIsDeepseek2OcrWithTheExpertKeysFromTheTensorShapes() {
        Translation t = translated(Dialects.text(deepseekocr(true).header()));
        GgufFile h = t.header();
        assertEquals("deepseekocr", t.handler());
        assertEquals("deepseek2-ocr", h.kv("general.architecture").value());
        assertEquals(4, h.kv("deepseek2-ocr.attention.head_count").value(), "copied from deepseekocr.*");
        assertEquals(1, h.kv("deepseek2-ocr.leading_dense_block_count").value());
        assertEquals(4, h.kv("deepseekocr.expert_count").value(), "the source keys stay, as Ollama leaves them");
        assertEquals(1e-6f, h.kv("deepseek2-ocr.attention.layer_norm_rms_epsilon").value());
        assertEquals(32, h.kv("deepseek2-ocr.expert_feed_forward_length").value(), "ne[0] of blk.1.ffn_down_exps");
        assertEquals(2, h.kv("deepseek2-ocr.expert_shared_count").value(), "64 shared-expert rows / 32");
        assertEquals(List.of("output.weight", "output_norm.weight", "token_embd.weight", "blk.0.attn_q.weight", "blk.0.ffn_down.weight",
                "blk.1.ffn_down_exps.weight", "blk.1.ffn_down_shexp.weight", "blk.1.ffn_gate_inp.weight"), names(t));
        assertTrue(t.slicesOnly(), "nothing computed: every tensor is the blob's bytes");
        assertEquals(4 + 12 + 10, t.changes().stream().filter(c -> c.kind() == TensorChange.Kind.DROPPED).count(),
                "the projector, SAM and CLIP tensors are left out");
    }

    @Test
    void keysTheFileAlreadyHasAreKept() {
        GgufFile g = deepseekocr(true).u32("deepseekocr.expert_feed_forward_length", 16).u32("deepseekocr.expert_shared_count", 7)
                .f32("deepseekocr.attention.layer_norm_rms_epsilon", 1e-5f).header();
        GgufFile h = translated(Dialects.text(g)).header();
        assertEquals(16, h.kv("deepseek2-ocr.expert_feed_forward_length").value());
        assertEquals(7, h.kv("deepseek2-ocr.expert_shared_count").value());
        assertEquals(1e-5f, h.kv("deepseek2-ocr.attention.layer_norm_rms_epsilon").value());
    }

    @Test
    void clipFaceIsADeepseekOcrProjectorUnderLlamaCppsNames() {
        Translation t = translated(Dialects.clip(deepseekocr(true).header()));
        GgufFile h = t.header();
        assertEquals("deepseekocr (clip)", t.handler());
        assertEquals("clip", h.kv("general.architecture").value());
        assertEquals("deepseekocr", h.kv("clip.projector_type").value());
        assertEquals(1, h.kv("clip.vision.block_count").value());
        assertEquals(16, h.kv("clip.vision.attention.head_count").value());
        assertEquals(64, h.kv("clip.vision.feed_forward_length").value(), "4 x 16 heads, Ollama's constant for the published model");
        assertEquals(64, h.kv("clip.vision.projection_dim").value(), "the text width");
        assertEquals(224, h.kv("clip.vision.image_size").value());
        assertEquals(1, h.kv("clip.vision.sam.block_count").value());
        assertEquals(32, h.kv("clip.vision.sam.embedding_length").value());
        assertEquals(14, h.kv("clip.vision.window_size").value());
        assertEquals(1, h.kv("clip.vision.projector.scale_factor").value());
        assertEquals(2, h.kv("clip.vision.preproc_min_tiles").value());
        assertEquals(9, h.kv("clip.vision.preproc_max_tiles").value());
        assertEquals(1e-6f, h.kv("clip.vision.attention.layer_norm_epsilon").value());
        assertEquals(new GgufArray(GgufValueType.FLOAT32, List.of(0.5f, 0.5f, 0.5f)), h.kv("clip.vision.image_std").value());
        assertTrue(h.kvs().stream().noneMatch(kv -> kv.key().startsWith("deepseekocr.") || kv.key().startsWith("tokenizer.")));
        assertEquals(List.of("v.image_newline", "mm.model.fc.bias", "mm.model.fc.weight", "v.view_seperator",
                "v.sam.blk.0.attn.out.weight", "v.sam.blk.0.attn.qkv.weight", "v.sam.blk.0.attn.pos_h.weight", "v.sam.blk.0.attn.pos_w.weight",
                "v.sam.blk.0.mlp.lin1.weight", "v.sam.blk.0.pre_ln.weight", "v.sam.blk.0.post_ln.weight", "v.sam.neck.0.weight",
                "v.sam.net_2.weight", "v.sam.net_3.weight", "v.sam.patch_embd.weight", "v.sam.pos_embd.weight",
                "v.blk.0.ln1.weight", "v.blk.0.ln2.weight", "v.blk.0.ffn_up.weight", "v.blk.0.ffn_down.weight",
                "v.blk.0.attn_out.weight", "v.blk.0.attn_qkv.weight", "v.class_embd", "v.patch_embd.weight", "v.position_embd.weight",
                "v.pre_ln.weight"), names(t));
        assertEquals(GgmlType.F32, h.tensor("v.patch_embd.weight").type(), "promoted from F16");
        assertEquals(GgmlType.F32, h.tensor("v.sam.patch_embd.weight").type(), "promoted from F16");
        assertEquals(GgmlType.F16, h.tensor("v.sam.net_2.weight").type(), "left as stored");
        assertEquals(List.of(64L, 1L), java.util.Arrays.stream(h.tensor("v.view_seperator").ne()).boxed().toList(),
                "llama.cpp's converter's dimensions, the same bytes");
        assertEquals(2, t.ops().size(), "the two promotions are the only computed tensors");
    }

    @Test
    void llamaCppsOwnConversionAndBrokenHeadersAreNotTranslated() {
        GgufFile upstream = new TinyGguf().str("general.architecture", "deepseek2-ocr").vocab(4)
                .tensor("token_embd.weight", GgmlType.F16, 16, 4).tensor("v.sam.patch_embd.weight", GgmlType.F16, 16, 16, 3, 32).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(upstream));
        assertInstanceOf(Outcome.Untouched.class, Dialects.clip(upstream));
        Outcome noExperts = Dialects.text(deepseekocr(false).header());
        assertTrue(assertInstanceOf(Outcome.Refused.class, noExperts).reason().contains("blk.1.ffn_down_exps"), noExperts::describe);
        GgufFile oddShared = deepseekocr(false).tensor("blk.1.ffn_down_exps.weight", GgmlType.F16, 32, 64, 4)
                .tensor("blk.1.ffn_down_shexp.weight", GgmlType.F16, 48, 64).header();
        assertInstanceOf(Outcome.Refused.class, Dialects.text(oddShared), "48 shared rows are not whole experts of 32");
        GgufFile noSam = new TinyGguf().str("general.architecture", "deepseekocr").u32("deepseekocr.embedding_length", 64)
                .u32("deepseekocr.vision.block_count", 1).tensor("v.class_embd", GgmlType.F32, 32).header();
        Outcome o = Dialects.clip(noSam);
        assertTrue(assertInstanceOf(Outcome.Refused.class, o).reason().contains("clip.vision.embedding_length"), o::describe);
        GgufFile noProjector = new TinyGguf().str("general.architecture", "deepseekocr").u32("deepseekocr.embedding_length", 64)
                .u32("deepseekocr.sam.block_count", 1).u32("deepseekocr.sam.embedding_length", 32).u32("deepseekocr.sam.head_count", 2)
                .u32("deepseekocr.vision.block_count", 1).u32("deepseekocr.vision.embedding_length", 32)
                .u32("deepseekocr.vision.head_count", 16).u32("deepseekocr.vision.image_size", 224).u32("deepseekocr.vision.patch_size", 14)
                .tensor("v.class_embd", GgmlType.F32, 32).header();
        o = Dialects.clip(noProjector);
        assertTrue(assertInstanceOf(Outcome.Refused.class, o).reason().contains("among the vision tensors"), o::describe);
        GgufFile floatHeads = new TinyGguf().str("general.architecture", "deepseekocr").f32("deepseekocr.vision.head_count", 16f)
                .tensor("v.class_embd", GgmlType.F32, 32).header();
        o = Dialects.clip(floatHeads);
        assertTrue(assertInstanceOf(Outcome.Refused.class, o).reason().contains("not UINT32"), o::describe);
    }
}
