package dev.modelfs.view.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.arch.QkPermutation;
import dev.modelfs.dialect.TinyGguf;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.hf.HfFolder;
import dev.modelfs.hf.HfTensor;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Hugging Face folder of a GLM-OCR model in Ollama's dialect (docs/FORMATS.md §7.3, §12.15): read through the
 * translation although its fused {@code ffn_up} is computed (the views read the stored header), each block's
 * {@code mlp.gate_up_proj} gathered from the blob's gate and up tensors, the q/k rows put back from NeoX halves.
 */
class GlmOcrFolderTest {
    /** A glmocr header: two heads of 4 (one KV head), M-RoPE [1, 1, 0], two text blocks, a vision tensor. */
    private static GgufFile dialect() {
        TinyGguf g = new TinyGguf().str("general.architecture", "glmocr").u32("glmocr.block_count", 2)
                .u32("glmocr.embedding_length", 8).u32("glmocr.attention.head_count", 2).u32("glmocr.attention.head_count_kv", 1)
                .u32("glmocr.attention.key_length", 4).u32("glmocr.attention.value_length", 4).u32("glmocr.feed_forward_length", 12)
                .u32("glmocr.context_length", 64).f32("glmocr.attention.layer_norm_rms_epsilon", 1e-5f).f32("glmocr.rope.freq_base", 1e4f)
                .f32("glmocr.rope.partial_rotary_factor", 1f)
                .kv("glmocr.rope.mrope_section", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(1, 1, 0)))
                .str("tokenizer.ggml.pre", "llama-bpe").vocab(12);
        for (int b = 0; b < 2; b++) {
            String p = "blk." + b + ".";
            g.tensor(p + "attn_k.weight", GgmlType.F16, 8, 4).tensor(p + "attn_norm.weight", GgmlType.F32, 8)
                    .tensor(p + "attn_out.weight", GgmlType.F16, 8, 8).tensor(p + "attn_q.weight", GgmlType.F16, 8, 8)
                    .tensor(p + "attn_v.weight", GgmlType.F16, 8, 4)
                    .tensor(p + "ffn_down.weight", GgmlType.F16, 12, 8).tensor(p + "ffn_gate.weight", GgmlType.F16, 8, 12)
                    .tensor(p + "ffn_norm.weight", GgmlType.F32, 8).tensor(p + "ffn_up.weight", GgmlType.F16, 8, 12)
                    .tensor(p + "post_attn_norm.weight", GgmlType.F32, 8).tensor(p + "post_ffn_norm.weight", GgmlType.F32, 8);
        }
        return g.tensor("output_norm.weight", GgmlType.F32, 8).tensor("token_embd.weight", GgmlType.F16, 8, 12)
                .tensor("v.blk.0.attn_qkv.weight", GgmlType.F16, 8, 24).header();
    }

    @Test
    void theFolderReadsTheTranslationWithTheFusedGateUpFromTheBlobHalves() {
        GgufFile stored = dialect();
        assertSame(stored, GgufModelView.forViews(stored), "the other views read the stored header (a computed ffn_up)");
        GgufModelView.FolderHeader fh = GgufModelView.folderHeader(stored);
        assertEquals("glm4", fh.header().kv("general.architecture").value());
        assertEquals(List.of("blk.0.ffn_up.weight", "blk.1.ffn_up.weight"), fh.concatenations().keySet().stream().sorted().toList());
        HfFolder hf = HfFolder.of(fh.header(), Map.of(), null, fh.concatenations());
        assertEquals("Glm4ForCausalLM", hf.hfArchitecture());
        Map<String, HfTensor> byName = new java.util.HashMap<>();
        hf.tensors().forEach(t -> byName.put(t.name(), t));
        HfTensor gateUp = byName.get("model.layers.1.mlp.gate_up_proj.weight");
        assertArrayEquals(new long[] {24, 8}, gateUp.shape());
        assertEquals(1, gateUp.assembled().batches());
        List<Long> offsets = gateUp.assembled().parts().stream().map(p -> p.sources().getFirst().offset()).toList();
        assertEquals(List.of(stored.tensor("blk.1.ffn_gate.weight").offset(), stored.tensor("blk.1.ffn_up.weight").offset()), offsets,
                "the gate rows, then the up rows, from the blob");
        assertNull(byName.get("model.layers.1.mlp.gate_proj.weight"));
        assertTrue(byName.keySet().stream().noneMatch(n -> n.startsWith("v.")), "the vision tower is mmproj.gguf's");
        HfTensor k = byName.get("model.layers.0.self_attn.k_proj.weight");
        assertEquals(QkPermutation.of(QkPermutation.Which.K, 2, 1, 4).ggufOrder().toString(), k.sourceRow().toString(),
                "HF row 2t + half from NeoX row half * D/2 + t");
        assertEquals("model.layers.0.post_self_attn_layernorm.weight", byName.keySet().stream()
                .filter(n -> n.startsWith("model.layers.0.post_self")).findFirst().orElseThrow());
    }
}
