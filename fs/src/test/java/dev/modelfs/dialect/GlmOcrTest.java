package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufReader;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.store.Digest;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * GLM-OCR's dialect handlers (docs/FORMATS.md §12.15): the text face as Ollama's {@code handle_glmocr} makes it
 * (llama.cpp's {@code glm4}, M-RoPE sections padded to four, the gate and up halves fused into {@code ffn_up}) and the
 * clip face as {@code handle_glmocr_clip} makes it (a {@code glm4v} projector, the patch slices renamed).
 */
class GlmOcrTest {
    /** A glmocr file as Ollama's convert_glmocr.go (8f4a00813) writes it: two text blocks, a one-block vision tower. */
    static TinyGguf dialect(String... omit) {
        List<String> left = List.of(omit);
        TinyGguf g = new TinyGguf().str("general.architecture", "glmocr");
        if (!left.contains("glmocr.block_count")) {
            g.u32("glmocr.block_count", 2);
        }
        if (!left.contains("glmocr.attention.key_length")) {
            g.u32("glmocr.attention.key_length", 4);
        }
        if (!left.contains("glmocr.rope.partial_rotary_factor")) {
            g.f32("glmocr.rope.partial_rotary_factor", 1f);
        }
        if (!left.contains("glmocr.rope.mrope_section")) {
            g.kv("glmocr.rope.mrope_section", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(1, 0, 1)));
        }
        if (!left.contains("glmocr.vision.image_mean")) {
            g.kv("glmocr.vision.image_mean", GgufValueType.ARRAY, new GgufArray(GgufValueType.FLOAT32, List.of(0.5f, 0.4f, 0.3f)));
        }
        g.u32("glmocr.embedding_length", 8).u32("glmocr.attention.head_count", 2).u32("glmocr.attention.head_count_kv", 1)
                .u32("glmocr.attention.value_length", 4).u32("glmocr.feed_forward_length", 12)
                .u32("glmocr.vision.block_count", 1).u32("glmocr.vision.embedding_length", 8).u32("glmocr.vision.attention.head_count", 2)
                .u32("glmocr.vision.intermediate_size", 16).u32("glmocr.vision.image_size", 336).u32("glmocr.vision.patch_size", 2)
                .u32("glmocr.vision.spatial_merge_size", 2).u32("glmocr.vision.out_hidden_size", 8).u32("glmocr.vision.temporal_patch_size", 2)
                .f32("glmocr.vision.attention.layer_norm_rms_epsilon", 1e-5f)
                .kv("glmocr.vision.image_std", GgufValueType.ARRAY, new GgufArray(GgufValueType.FLOAT32, List.of(0.2f, 0.2f, 0.2f)))
                .str("tokenizer.ggml.pre", "llama-bpe").vocab(12);
        for (int b = 0; b < 2; b++) {
            String p = "blk." + b + ".";
            g.tensor(p + "attn_norm.weight", GgmlType.F32, 8).tensor(p + "attn_out.weight", GgmlType.F16, 8, 8)
                    .tensor(p + "ffn_down.weight", GgmlType.F16, 12, 8).tensor(p + "ffn_gate.weight", GgmlType.F16, 8, 12)
                    .tensor(p + "ffn_norm.weight", GgmlType.F32, 8).tensor(p + "ffn_up.weight", GgmlType.F16, 8, 12)
                    .tensor(p + "post_attn_norm.weight", GgmlType.F32, 8).tensor(p + "post_ffn_norm.weight", GgmlType.F32, 8);
        }
        return g.tensor("mm.down.weight", GgmlType.F16, 24, 8).tensor("mm.gate.weight", GgmlType.F16, 8, 24)
                .tensor("mm.model.fc.weight", GgmlType.F16, 8, 8).tensor("mm.patch_merger.bias", GgmlType.F32, 8)
                .tensor("mm.patch_merger.weight", GgmlType.F16, 2, 2, 8, 8).tensor("mm.post_norm.weight", GgmlType.F32, 8)
                .tensor("mm.up.weight", GgmlType.F16, 8, 24).tensor("output_norm.weight", GgmlType.F32, 8)
                .tensor("token_embd.weight", GgmlType.F16, 8, 12)
                .tensor("v.blk.0.attn_out.weight", GgmlType.F16, 8, 8).tensor("v.blk.0.attn_qkv.weight", GgmlType.F16, 8, 24)
                .tensor("v.patch_embd_0.weight", GgmlType.F16, 2, 2, 3, 8).tensor("v.patch_embd_1.weight", GgmlType.F16, 2, 2, 3, 8);
    }

    private static Translation translated(Outcome o) {
        return assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
    }

    private static List<String> names(GgufFile h) {
        return h.tensors().stream().map(GgufTensorInfo::name).toList();
    }

    private static byte[] bytes(MemorySegment m, GgufFile h, GgufTensorInfo t) {
        return m.asSlice(h.dataStart() + t.offset(), t.byteSize()).toArray(ValueLayout.JAVA_BYTE);
    }

    private static byte[] materialize(Translation t, byte[] blob) {
        return VisionHandlersTest.materialize(
                TranslatedGguf.assemble(t, new BlobRef(Digest.parse("sha256:" + "cd".repeat(32)).orElseThrow(), blob.length)), blob);
    }

    @Test
    void textFaceIsGlm4WithFusedGateUpAndLlamaCppNames() {
        TinyGguf dialect = dialect();
        byte[] blob = dialect.bytes();
        GgufFile src = dialect.header();
        Translation t = translated(Dialects.text(src));
        GgufFile h = t.header();
        assertEquals("glmocr", t.handler());
        assertEquals("glm4", h.kv("general.architecture").value());
        assertEquals(8, h.kv("glm4.embedding_length").value());
        assertEquals(2, h.kv("glmocr.block_count").value(), "the old keys stay, as rename_kv_prefix leaves them");
        GgufArray sections = (GgufArray) h.kv("glm4.rope.dimension_sections").value();
        assertEquals(GgufValueType.INT32, sections.elementType());
        assertEquals(List.of(1, 0, 1, 0), sections.values());
        assertEquals(4, h.kv("glm4.rope.dimension_count").value(), "key length x partial rotary factor 1");
        assertEquals("chatglm-bpe", h.kv("tokenizer.ggml.pre").value());
        assertEquals(List.of("blk.0.attn_norm.weight", "blk.0.attn_output.weight", "blk.0.ffn_down.weight", "blk.0.ffn_up.weight",
                "blk.0.ffn_norm.weight", "blk.0.post_attention_norm.weight", "blk.0.post_ffw_norm.weight",
                "blk.1.attn_norm.weight", "blk.1.attn_output.weight", "blk.1.ffn_down.weight", "blk.1.ffn_up.weight",
                "blk.1.ffn_norm.weight", "blk.1.post_attention_norm.weight", "blk.1.post_ffw_norm.weight",
                "output_norm.weight", "token_embd.weight"), names(h));
        assertArrayEquals(new long[] {8, 24}, h.tensor("blk.1.ffn_up.weight").ne(), "twice the rows of each half");
        assertEquals(2, t.ops().size(), "one fusion per block");
        byte[] file = materialize(t, blob);
        GgufFile back = GgufReader.read(MemorySegment.ofArray(file));
        MemorySegment b = MemorySegment.ofArray(blob);
        MemorySegment f = MemorySegment.ofArray(file);
        for (int blk = 0; blk < 2; blk++) {
            byte[] gate = bytes(b, src, src.tensor("blk." + blk + ".ffn_gate.weight"));
            byte[] up = bytes(b, src, src.tensor("blk." + blk + ".ffn_up.weight"));
            byte[] fused = bytes(f, back, back.tensor("blk." + blk + ".ffn_up.weight"));
            byte[] want = new byte[gate.length + up.length];
            System.arraycopy(gate, 0, want, 0, gate.length);
            System.arraycopy(up, 0, want, gate.length, up.length);
            assertArrayEquals(want, fused, "block " + blk + ": the gate rows, then the up rows");
        }
        assertArrayEquals(bytes(b, src, src.tensor("blk.0.attn_out.weight")), bytes(f, back, back.tensor("blk.0.attn_output.weight")));
        assertTrue(t.changes().stream().anyMatch(c -> c.kind() == TensorChange.Kind.DROPPED && c.from().equals("v.patch_embd_0.weight")));
        // llama.cpp's own conversion is architecture glm4: no dialect
        GgufFile upstream = new TinyGguf().str("general.architecture", "glm4").vocab(4).tensor("token_embd.weight", GgmlType.F16, 8, 4).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(upstream));
        assertInstanceOf(Outcome.Untouched.class, Dialects.clip(upstream));
    }

    @Test
    void theRotaryWidthFollowsThePartialRotaryFactor() {
        GgufFile half = dialect("glmocr.rope.partial_rotary_factor").f32("glmocr.rope.partial_rotary_factor", 0.5f).header();
        assertEquals(2, translated(Dialects.text(half)).header().kv("glm4.rope.dimension_count").value());
    }

    @Test
    void clipFaceIsAGlm4vProjectorOfBlobSlices() {
        TinyGguf dialect = dialect();
        byte[] blob = dialect.bytes();
        GgufFile src = dialect.header();
        Translation t = translated(Dialects.clip(src));
        GgufFile h = t.header();
        assertEquals("glmocr (clip)", t.handler());
        assertEquals("clip", h.kv("general.architecture").value());
        assertEquals("glm4v", h.kv("clip.projector_type").value());
        assertEquals(16, h.kv("clip.vision.feed_forward_length").value());
        assertEquals(8, h.kv("clip.vision.projection_dim").value());
        assertEquals(336, h.kv("clip.vision.image_size").value());
        assertEquals(2, h.kv("clip.vision.spatial_merge_size").value());
        assertEquals(1e-5f, h.kv("clip.vision.attention.layer_norm_epsilon").value());
        assertEquals(List.of(0.5f, 0.4f, 0.3f), ((GgufArray) h.kv("clip.vision.image_mean").value()).values());
        assertEquals(true, h.kv("clip.use_silu").value());
        assertEquals(true, h.kv("clip.has_vision_encoder").value());
        assertNull(h.kv("clip.vision.temporal_patch_size"), "handle_glmocr_clip does not copy it");
        assertTrue(h.kvs().stream().noneMatch(kv -> kv.key().startsWith("glmocr.") || kv.key().startsWith("tokenizer.")));
        assertEquals(List.of("mm.down.weight", "mm.gate.weight", "mm.model.fc.weight", "mm.patch_merger.bias", "mm.patch_merger.weight",
                "mm.post_norm.weight", "mm.up.weight", "v.blk.0.attn_out.weight", "v.blk.0.attn_qkv.weight", "v.patch_embd.weight",
                "v.patch_embd.weight.1"), names(h));
        assertTrue(t.slicesOnly(), "the patch slices keep their stored F16, as llama.cpp's converter writes them");
        assertEquals(GgmlType.F16, h.tensor("v.patch_embd.weight.1").type());
        byte[] file = materialize(t, blob);
        GgufFile back = GgufReader.read(MemorySegment.ofArray(file));
        assertArrayEquals(bytes(MemorySegment.ofArray(blob), src, src.tensor("v.patch_embd_1.weight")),
                bytes(MemorySegment.ofArray(file), back, back.tensor("v.patch_embd.weight.1")), "renamed: the blob's bytes");
    }

    @Test
    void hostileHeadersAreRefusedWhole() {
        GgufFile stringSections = dialect("glmocr.rope.mrope_section").str("glmocr.rope.mrope_section", "1,0,1").header();
        assertTrue(assertInstanceOf(Outcome.Refused.class, Dialects.text(stringSections)).reason().contains("mrope_section"));
        GgufFile wideFactor = dialect("glmocr.rope.partial_rotary_factor").f32("glmocr.rope.partial_rotary_factor", 2f).header();
        assertTrue(assertInstanceOf(Outcome.Refused.class, Dialects.text(wideFactor)).reason().contains("partial_rotary_factor"));
        GgufFile floatKey = dialect("glmocr.attention.key_length").f32("glmocr.attention.key_length", 4f).header();
        assertTrue(assertInstanceOf(Outcome.Refused.class, Dialects.text(floatKey)).reason().contains("key_length"));
        GgufFile hugeBlocks = dialect("glmocr.block_count").u32("glmocr.block_count", 1 << 30).header();
        assertTrue(assertInstanceOf(Outcome.Refused.class, Dialects.text(hugeBlocks)).reason().contains("block_count"));
        GgufFile gateAlone = new TinyGguf().str("general.architecture", "glmocr").u32("glmocr.block_count", 1)
                .tensor("blk.0.ffn_gate.weight", GgmlType.F16, 8, 12).header();
        assertTrue(assertInstanceOf(Outcome.Refused.class, Dialects.text(gateAlone)).reason().contains("ffn_up"));
        GgufFile mismatched = new TinyGguf().str("general.architecture", "glmocr").u32("glmocr.block_count", 1)
                .tensor("blk.0.ffn_gate.weight", GgmlType.F16, 8, 12).tensor("blk.0.ffn_up.weight", GgmlType.F32, 8, 12).header();
        assertInstanceOf(Outcome.Refused.class, Dialects.text(mismatched));
        GgufFile intMean = dialect("glmocr.vision.image_mean").kv("glmocr.vision.image_mean", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(1, 1, 1))).header();
        assertTrue(assertInstanceOf(Outcome.Refused.class, Dialects.clip(intMean)).reason().contains("image_mean"));
        GgufFile noProjector = new TinyGguf().str("general.architecture", "glmocr").u32("glmocr.vision.block_count", 1)
                .u32("glmocr.vision.embedding_length", 8).u32("glmocr.vision.attention.head_count", 2).u32("glmocr.vision.intermediate_size", 16)
                .u32("glmocr.vision.image_size", 336).u32("glmocr.vision.patch_size", 2).u32("glmocr.vision.out_hidden_size", 8)
                .tensor("v.patch_embd_0.weight", GgmlType.F16, 2, 2, 3, 8).tensor("v.patch_embd_1.weight", GgmlType.F16, 2, 2, 3, 8).header();
        assertTrue(assertInstanceOf(Outcome.Refused.class, Dialects.clip(noProjector)).reason().contains("no mm.model.fc.weight"));
        GgufFile noVisionKeys = new TinyGguf().str("general.architecture", "glmocr").tensor("v.patch_embd_0.weight", GgmlType.F16, 2, 2, 3, 8).header();
        assertTrue(assertInstanceOf(Outcome.Refused.class, Dialects.clip(noVisionKeys)).reason().contains("clip.vision."));
    }
}
