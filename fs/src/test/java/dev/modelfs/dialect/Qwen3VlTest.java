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
 * Qwen3-VL's dialect handlers (docs/FORMATS.md §12.12): the text face as Ollama's {@code handle_qwen3vl} makes it
 * (the rope sections and deepstack count injected) and the clip face as {@code handle_qwen3vl_clip} makes it (QKV
 * stored one after another, the Conv3D patch embedding split per temporal slice, the deepstack adapters renamed by
 * their block index).
 */
class Qwen3VlTest {
    /** A qwen3vl(moe) file as Ollama's convert_qwen3vl.go at 7d25b9e19 writes it: one text block, two vision blocks, a deepstack adapter after block 1. */
    static TinyGguf dialect(String arch, boolean merger) {
        return dialect(arch, merger, new GgufArray(GgufValueType.INT32, List.of(1)));
    }

    static TinyGguf dialect(String arch, boolean merger, GgufArray deepstack) {
        TinyGguf g = new TinyGguf().str("general.architecture", arch).u32(arch + ".block_count", 1).u32(arch + ".embedding_length", 16)
                .u32(arch + ".vision.block_count", 2).u32(arch + ".vision.embedding_length", 8).u32(arch + ".vision.attention.head_count", 2)
                .u32(arch + ".vision.num_channels", 3).u32(arch + ".vision.patch_size", 4).u32(arch + ".vision.spatial_merge_size", 2)
                .kv(arch + ".vision.deepstack_visual_indexes", GgufValueType.ARRAY, deepstack)
                .u32(arch + ".vision.shortest_edge", 1024).vocab(12)
                .tensor("token_embd.weight", GgmlType.F16, 16, 12).tensor("output_norm.weight", GgmlType.F32, 16)
                .tensor("v.patch_embed.weight", GgmlType.F16, 4, 4, 2, 24).tensor("v.patch_embed.bias", GgmlType.F32, 8)
                .tensor("v.pos_embed.weight", GgmlType.F16, 8, 9);
        for (int b = 0; b < 2; b++) {
            for (String x : new String[] {"q", "k", "v"}) {
                g.tensor("v.blk." + b + ".attn_" + x + ".weight", GgmlType.F16, 8, 8).tensor("v.blk." + b + ".attn_" + x + ".bias", GgmlType.F32, 8);
            }
            g.tensor("v.blk." + b + ".mlp.linear_fc1.weight", GgmlType.F16, 8, 24).tensor("v.blk." + b + ".norm1.weight", GgmlType.F32, 8);
        }
        g.tensor("v.deepstack_merger.0.linear_fc1.weight", GgmlType.F16, 32, 32).tensor("v.deepstack_merger.0.norm.bias", GgmlType.F32, 32);
        if (merger) {
            g.tensor("v.merger.norm.weight", GgmlType.F32, 8).tensor("v.merger.linear_fc1.weight", GgmlType.F16, 32, 32)
                    .tensor("v.merger.linear_fc2.weight", GgmlType.F16, 32, 16);
        }
        return g;
    }

    private static Translation translated(Outcome o) {
        return assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
    }

    @Test
    void textFaceInjectsTheRopeSectionsAndTheDeepstackCount() {
        for (String arch : new String[] {"qwen3vl", "qwen3vlmoe"}) {
            Translation t = translated(Dialects.text(dialect(arch, true).header()));
            GgufFile h = t.header();
            assertEquals("qwen3vl", t.handler());
            assertEquals(arch, h.kv("general.architecture").value());
            assertEquals(List.of(24, 20, 20, 0), ((GgufArray) h.kv(arch + ".rope.dimension_sections").value()).values());
            assertEquals(1, h.kv(arch + ".n_deepstack_layers").value());
            assertEquals(List.of("token_embd.weight", "output_norm.weight"), h.tensors().stream().map(GgufTensorInfo::name).toList());
            assertTrue(t.slicesOnly());
        }
        // llama.cpp's own conversion carries the sections: no dialect
        GgufFile upstream = new TinyGguf().str("general.architecture", "qwen3vl")
                .kv("qwen3vl.rope.dimension_sections", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(24, 20, 20, 0)))
                .vocab(4).tensor("token_embd.weight", GgmlType.F16, 16, 4).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(upstream));
        assertInstanceOf(Outcome.Untouched.class, Dialects.clip(upstream));
    }

    @Test
    void clipFaceIsAQwen3VlMergerWithQkvMergedPatchSplitAndDeepstackRenamed() {
        TinyGguf dialect = dialect("qwen3vl", true);
        byte[] blob = dialect.bytes();
        GgufFile src = dialect.header();
        Translation t = translated(Dialects.clip(src));
        GgufFile h = t.header();
        assertEquals("qwen3vl (clip)", t.handler());
        assertEquals("qwen3vl_merger", h.kv("clip.projector_type").value());
        assertEquals(24, h.kv("clip.vision.feed_forward_length").value());
        assertEquals(12, h.kv("clip.vision.image_size").value(), "sqrt(9 positions) * patch 4");
        assertEquals(1024, h.kv("clip.vision.image_min_pixels").value());
        assertEquals(Qwen3VlClip.MAX_PIXELS, h.kv("clip.vision.image_max_pixels").value());
        assertEquals(2, h.kv("clip.vision.temporal_patch_size").value());
        assertEquals(List.of(false, true), ((GgufArray) h.kv("clip.vision.is_deepstack_layers").value()).values());
        assertNull(h.kv("clip.vision.num_channels"));
        assertTrue(h.kvs().stream().noneMatch(kv -> kv.key().startsWith("qwen3vl.") || kv.key().startsWith("tokenizer.")));
        List<String> names = h.tensors().stream().map(GgufTensorInfo::name).toList();
        for (String n : new String[] {"v.patch_embd.weight", "v.patch_embd.weight.1", "v.patch_embd.bias", "v.position_embd.weight",
                "v.blk.0.attn_qkv.weight", "v.blk.1.attn_qkv.bias", "v.blk.0.ffn_up.weight", "v.blk.1.ln1.weight", "v.deepstack.1.fc1.weight",
                "v.deepstack.1.norm.bias", "v.post_ln.weight", "mm.0.weight", "mm.2.weight"}) {
            assertTrue(names.contains(n), n + " in " + names);
        }
        assertTrue(names.stream().noneMatch(n -> n.contains("attn_k") || n.contains("deepstack_merger") || n.contains("norm1")), names.toString());
        assertEquals(List.of(8L, 24L), List.of(h.tensor("v.blk.0.attn_qkv.weight").ne()[0], h.tensor("v.blk.0.attn_qkv.weight").ne()[1]));
        assertEquals(GgmlType.F32, h.tensor("v.position_embd.weight").type());
        byte[] file = VisionHandlersTest.materialize(
                TranslatedGguf.assemble(t, new BlobRef(Digest.parse("sha256:" + "ef".repeat(32)).orElseThrow(), blob.length)), blob);
        GgufFile back = GgufReader.read(MemorySegment.ofArray(file));
        MemorySegment b = MemorySegment.ofArray(blob);
        MemorySegment f = MemorySegment.ofArray(file);
        // attn_qkv: q, k, v one after another, the blob's bytes
        GgufTensorInfo qkv = back.tensor("v.blk.1.attn_qkv.weight");
        long at = 0;
        for (String x : new String[] {"q", "k", "v"}) {
            GgufTensorInfo part = src.tensor("v.blk.1.attn_" + x + ".weight");
            assertArrayEquals(b.asSlice(src.dataStart() + part.offset(), part.byteSize()).toArray(ValueLayout.JAVA_BYTE),
                    f.asSlice(back.dataStart() + qkv.offset() + at, part.byteSize()).toArray(ValueLayout.JAVA_BYTE), x);
            at += part.byteSize();
        }
        // v.patch_embd.weight.1 [w, h, cin, cout]: element (i, cin c, cout o) is the blob's (i, slice 1, row o * cin + c)
        GgufTensorInfo conv = src.tensor("v.patch_embed.weight");
        GgufTensorInfo s1 = back.tensor("v.patch_embd.weight.1");
        assertEquals(List.of(4L, 4L, 3L, 8L), java.util.Arrays.stream(s1.ne()).boxed().toList());
        for (int o = 0; o < 8; o++) {
            for (int c = 0; c < 3; c++) {
                for (int i = 0; i < 16; i++) {
                    long srcIdx = i + 16L * (1 + 2L * (o * 3L + c));
                    long dstIdx = i + 16L * (c + 3L * o);
                    short half = b.get(ValueLayout.JAVA_SHORT_UNALIGNED, src.dataStart() + conv.offset() + srcIdx * 2);
                    assertEquals(Float.float16ToFloat(half), f.get(ValueLayout.JAVA_FLOAT_UNALIGNED, back.dataStart() + s1.offset() + dstIdx * 4));
                }
            }
        }
    }

    @Test
    void clipFaceWithoutTheMergerIsRefused() {
        Outcome.Refused r = assertInstanceOf(Outcome.Refused.class, Dialects.clip(dialect("qwen3vl", false).header()));
        assertTrue(r.reason().contains("no mm.0.weight"), r.reason());
        translated(Dialects.text(dialect("qwen3vl", false).header()));   // the text face does not need it
    }

    @Test
    void hostileClipHeadersAreRefusedWhole() {
        GgufFile floatIndexes = dialect("qwen3vl", true, new GgufArray(GgufValueType.FLOAT32, List.of(1f))).header();
        assertTrue(assertInstanceOf(Outcome.Refused.class, Dialects.clip(floatIndexes)).reason().contains("deepstack_visual_indexes"));
        GgufFile stringEpsilon = dialect("qwen3vl", true).str("qwen3vl.vision.attention.layer_norm_epsilon", "1e-6").header();
        assertTrue(assertInstanceOf(Outcome.Refused.class, Dialects.clip(stringEpsilon)).reason().contains("layer_norm_epsilon"));
        GgufFile f32Patch = new TinyGguf().str("general.architecture", "qwen3vl").u32("qwen3vl.embedding_length", 16)
                .u32("qwen3vl.vision.block_count", 1).u32("qwen3vl.vision.embedding_length", 8).u32("qwen3vl.vision.attention.head_count", 2)
                .u32("qwen3vl.vision.patch_size", 4).tensor("v.patch_embed.weight", GgmlType.F32, 4, 4, 2, 24)
                .tensor("v.pos_embed.weight", GgmlType.F16, 8, 9).tensor("v.blk.0.mlp.linear_fc1.weight", GgmlType.F16, 8, 24).header();
        assertTrue(assertInstanceOf(Outcome.Refused.class, Dialects.clip(f32Patch)).reason().contains("not F16"));
    }
}
