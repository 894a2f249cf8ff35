package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
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
 * Qwen 2.5-VL's dialect handlers (docs/FORMATS.md §12.11): the text face as Ollama's {@code handle_qwen25vl} makes it
 * (llama.cpp's {@code qwen2vl}, the M-RoPE sections padded to four) and the clip face as
 * {@code handle_qwen25vl_clip} makes it (a {@code qwen2.5vl_merger} projector, the temporal slices promoted to F32).
 */
class Qwen25VlTest {
    /** A qwen25vl file as Ollama's convert_qwen25vl.go writes it: one text block, a vision tower of two blocks. */
    static TinyGguf dialect(boolean mrope, boolean fullAttention) {
        TinyGguf g = new TinyGguf().str("general.architecture", "qwen25vl").u32("qwen25vl.block_count", 1)
                .u32("qwen25vl.embedding_length", 16).u32("qwen25vl.attention.head_count", 2).u32("qwen25vl.attention.head_count_kv", 1)
                .u32("qwen25vl.vision.block_count", 2).u32("qwen25vl.vision.embedding_length", 8)
                .u32("qwen25vl.vision.attention.head_count", 2).u32("qwen25vl.vision.num_channels", 0)
                .u32("qwen25vl.vision.patch_size", 2).u32("qwen25vl.vision.spatial_merge_size", 2).u32("qwen25vl.vision.window_size", 112)
                .f32("qwen25vl.vision.attention.layer_norm_epsilon", 1e-6f).vocab(12)
                .tensor("token_embd.weight", GgmlType.F16, 16, 12).tensor("blk.0.attn_q.weight", GgmlType.F16, 16, 16)
                .tensor("output_norm.weight", GgmlType.F32, 16)
                .tensor("v.patch_embd_0.weight", GgmlType.F16, 2, 2, 3, 8).tensor("v.patch_embd_1.weight", GgmlType.F16, 2, 2, 3, 8);
        if (mrope) {
            g.kv("qwen25vl.rope.mrope_section", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(2, 3, 3)));
        }
        if (fullAttention) {
            g.kv("qwen25vl.vision.fullatt_block_indexes", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(1)));
        }
        for (int b = 0; b < 2; b++) {
            g.tensor("v.blk." + b + ".attn_q.weight", GgmlType.F16, 8, 8).tensor("v.blk." + b + ".ffn_up.weight", GgmlType.F16, 8, 24)
                    .tensor("v.blk." + b + ".ln1.weight", GgmlType.F32, 8);
        }
        return g.tensor("v.merger.ln_q.weight", GgmlType.F32, 8).tensor("v.merger.mlp.0.weight", GgmlType.F16, 32, 32)
                .tensor("v.merger.mlp.0.bias", GgmlType.F32, 32).tensor("v.merger.mlp.2.weight", GgmlType.F16, 32, 16)
                .tensor("v.merger.mlp.2.bias", GgmlType.F32, 16);
    }

    private static Translation translated(Outcome o) {
        return assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
    }

    private static List<String> names(GgufFile h) {
        return h.tensors().stream().map(GgufTensorInfo::name).toList();
    }

    @Test
    void textFaceIsQwen2VlWithFourDimensionSectionsAndNoVisionTower() {
        Translation t = translated(Dialects.text(dialect(true, true).header()));
        GgufFile h = t.header();
        assertEquals("qwen25vl", t.handler());
        assertEquals("qwen2vl", h.kv("general.architecture").value());
        assertEquals(16, h.kv("qwen2vl.embedding_length").value());
        assertEquals(1, h.kv("qwen2vl.attention.head_count_kv").value());
        GgufArray sections = (GgufArray) h.kv("qwen2vl.rope.dimension_sections").value();
        assertEquals(GgufValueType.INT32, sections.elementType());
        assertEquals(List.of(2, 3, 3, 0), sections.values());
        assertEquals(16, h.kv("qwen25vl.embedding_length").value(), "the old keys stay, as rename_kv_prefix leaves them");
        assertEquals(List.of("token_embd.weight", "blk.0.attn_q.weight", "output_norm.weight"), names(h));
        assertTrue(t.slicesOnly(), "metadata and drops only");
        // llama.cpp's own conversion of the same model is architecture qwen2vl: no dialect
        GgufFile upstream = new TinyGguf().str("general.architecture", "qwen2vl").vocab(4).tensor("token_embd.weight", GgmlType.F16, 16, 4).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(upstream));
        assertInstanceOf(Outcome.Untouched.class, Dialects.clip(upstream));
    }

    @Test
    void textFaceWithoutMropeSectionsIsRefused() {
        Outcome.Refused r = assertInstanceOf(Outcome.Refused.class, Dialects.text(dialect(false, true).header()));
        assertTrue(r.reason().contains("mrope_section"), r.reason());
    }

    @Test
    void clipFaceIsAQwen25VlMergerWithThePatchSlicesPromoted() {
        TinyGguf dialect = dialect(true, true);
        byte[] blob = dialect.bytes();
        GgufFile src = dialect.header();
        Translation t = translated(Dialects.clip(src));
        GgufFile h = t.header();
        assertEquals("qwen25vl (clip)", t.handler());
        assertEquals("clip", h.kv("general.architecture").value());
        assertEquals("qwen2.5vl_merger", h.kv("clip.projector_type").value());
        assertEquals(16, h.kv("clip.vision.projection_dim").value());
        assertEquals(24, h.kv("clip.vision.feed_forward_length").value(), "ne[1] of v.blk.0.ffn_up.weight");
        assertEquals(2, h.kv("clip.vision.n_wa_pattern").value(), "fullatt_block_indexes[0] + 1");
        assertEquals(560, h.kv("clip.vision.image_size").value());
        assertEquals(112, h.kv("clip.vision.window_size").value());
        assertEquals(true, h.kv("clip.use_silu").value());
        assertEquals(null, h.kv("clip.vision.num_channels"), "not copied: Ollama's converter may have written 0");
        assertTrue(h.kvs().stream().noneMatch(kv -> kv.key().startsWith("qwen25vl.") || kv.key().startsWith("tokenizer.")));
        assertEquals(List.of("v.patch_embd.weight", "v.patch_embd.weight.1", "v.blk.0.attn_q.weight", "v.blk.0.ffn_up.weight", "v.blk.0.ln1.weight",
                "v.blk.1.attn_q.weight", "v.blk.1.ffn_up.weight", "v.blk.1.ln1.weight", "v.post_ln.weight", "mm.0.weight", "mm.0.bias",
                "mm.2.weight", "mm.2.bias"), names(h));
        assertEquals(2, t.ops().size(), "the two promotions");
        byte[] file = VisionHandlersTest.materialize(
                TranslatedGguf.assemble(t, new BlobRef(Digest.parse("sha256:" + "ab".repeat(32)).orElseThrow(), blob.length)), blob);
        GgufFile back = GgufReader.read(MemorySegment.ofArray(file));
        MemorySegment b = MemorySegment.ofArray(blob);
        MemorySegment f = MemorySegment.ofArray(file);
        GgufTensorInfo stored = src.tensor("v.patch_embd_1.weight");
        GgufTensorInfo slice = back.tensor("v.patch_embd.weight.1");
        assertEquals(GgmlType.F32, slice.type());
        for (int i = 0; i < 2 * 2 * 3 * 8; i++) {
            short half = b.get(ValueLayout.JAVA_SHORT_UNALIGNED, src.dataStart() + stored.offset() + i * 2L);
            assertEquals(Float.float16ToFloat(half), f.get(ValueLayout.JAVA_FLOAT_UNALIGNED, back.dataStart() + slice.offset() + i * 4L), "element " + i);
        }
        GgufTensorInfo mm2 = back.tensor("mm.2.weight");
        GgufTensorInfo lin2 = src.tensor("v.merger.mlp.2.weight");
        assertArrayEquals(b.asSlice(src.dataStart() + lin2.offset(), lin2.byteSize()).toArray(ValueLayout.JAVA_BYTE),
                f.asSlice(back.dataStart() + mm2.offset(), mm2.byteSize()).toArray(ValueLayout.JAVA_BYTE), "renamed: the blob's bytes");
    }

    @Test
    void clipFaceDefaultsTheWindowPatternAndRefusesAMissingMerger() {
        assertEquals(Qwen25VlClip.WA_PATTERN, translated(Dialects.clip(dialect(true, false).header())).header().kv("clip.vision.n_wa_pattern").value());
        GgufFile noMerger = new TinyGguf().str("general.architecture", "qwen25vl").u32("qwen25vl.embedding_length", 16)
                .u32("qwen25vl.vision.block_count", 1).u32("qwen25vl.vision.embedding_length", 8).u32("qwen25vl.vision.attention.head_count", 2)
                .u32("qwen25vl.vision.patch_size", 2).tensor("v.patch_embd_0.weight", GgmlType.F16, 2, 2, 3, 8)
                .tensor("v.patch_embd_1.weight", GgmlType.F16, 2, 2, 3, 8).tensor("v.blk.0.ffn_up.weight", GgmlType.F16, 8, 24).header();
        Outcome.Refused r = assertInstanceOf(Outcome.Refused.class, Dialects.clip(noMerger));
        assertTrue(r.reason().contains("no mm.0.weight"), r.reason());
    }

    @Test
    void hostileHeadersAreRefusedWhole() {
        GgufFile stringSections = dialect(false, true).str("qwen25vl.rope.mrope_section", "2,3,3").header();
        assertTrue(assertInstanceOf(Outcome.Refused.class, Dialects.text(stringSections)).reason().contains("mrope_section"));
        GgufFile floatEmbedding = new TinyGguf().str("general.architecture", "qwen25vl").f32("qwen25vl.embedding_length", 16f)
                .tensor("v.patch_embd_0.weight", GgmlType.F16, 2, 2, 3, 8).header();   // the text width as FLOAT32
        assertTrue(assertInstanceOf(Outcome.Refused.class, Dialects.clip(floatEmbedding)).reason().contains("qwen25vl.embedding_length"));
        GgufFile floatFull = dialect(true, false)
                .kv("qwen25vl.vision.fullatt_block_indexes", GgufValueType.ARRAY, new GgufArray(GgufValueType.FLOAT32, List.of(1f))).header();
        assertTrue(assertInstanceOf(Outcome.Refused.class, Dialects.clip(floatFull)).reason().contains("fullatt_block_indexes"));
    }
}
