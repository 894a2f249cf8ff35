package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.Segment;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufReader;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.store.Digest;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Ollama's {@code handle_qwen35_clip} / {@code handle_qwen35moe_clip} (docs/FORMATS.md §12.8) on headers written the
 * way the published Qwen 3.5 files embed their vision tower: clip keys copied and injected, the per-block Q, K, V
 * stored one after another as {@code attn_qkv}, the Conv3D patch embedding split into two F32 temporal slices
 * (values checked against the blob's F16 at the expected positions), the merger renamed to {@code mm.0/mm.2},
 * the text model left out; contradicting headers refused.
 */
class Qwen35ClipTest {
    private static final BlobRef BLOB = new BlobRef(Digest.parse("sha256:" + "ef".repeat(32)).orElseThrow(), 1 << 20);

    /** Patch 4x4, 3 input channels, 2 output channels (the Conv3D flattened to [4, 4, 2, 6]). */
    private static TinyGguf dialect(String arch, GgmlType patchType) {
        return new TinyGguf().str("general.architecture", arch).u32(arch + ".block_count", 1).u32(arch + ".embedding_length", 16)
                .kv(arch + ".ssm.v_head_reordered", GgufValueType.BOOL, true)
                .u32(arch + ".vision.block_count", 1).u32(arch + ".vision.embedding_length", 8)
                .u32(arch + ".vision.attention.head_count", 2).u32(arch + ".vision.num_channels", 3)
                .u32(arch + ".vision.patch_size", 4).u32(arch + ".vision.spatial_merge_size", 2)
                .u32(arch + ".vision.temporal_patch_size", 2)
                .vocab(4)
                .tensor("token_embd.weight", GgmlType.F16, 16, 4)
                .tensor("mtp.fc.weight", GgmlType.F16, 32, 16)
                .tensor("v.blk.0.attn_q.bias", GgmlType.F32, 8)
                .tensor("v.blk.0.attn_k.bias", GgmlType.F32, 8)
                .tensor("v.blk.0.attn_v.bias", GgmlType.F32, 8)
                .tensor("v.blk.0.attn_q.weight", GgmlType.F16, 8, 8)
                .tensor("v.blk.0.attn_k.weight", GgmlType.F16, 8, 8)
                .tensor("v.blk.0.attn_v.weight", GgmlType.F16, 8, 8)
                .tensor("v.blk.0.attn_out.weight", GgmlType.F16, 8, 8)
                .tensor("v.blk.0.mlp.linear_fc1.weight", GgmlType.F16, 8, 12)
                .tensor("v.blk.0.mlp.linear_fc2.weight", GgmlType.F16, 12, 8)
                .tensor("v.blk.0.norm1.weight", GgmlType.F32, 8)
                .tensor("v.blk.0.norm2.weight", GgmlType.F32, 8)
                .tensor("v.merger.linear_fc1.weight", GgmlType.F16, 32, 32)
                .tensor("v.merger.linear_fc2.weight", GgmlType.F16, 32, 16)
                .tensor("v.merger.norm.weight", GgmlType.F32, 8)
                .tensor("v.patch_embed.bias", GgmlType.F32, 8)
                .tensor("v.patch_embed.weight", patchType, 4, 4, 2, 6)
                .tensor("v.pos_embed.weight", GgmlType.F16, 8, 16);
    }

    private static Translation translated(GgufFile g) {
        Outcome o = Dialects.clip(g);
        return assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
    }

    @Test
    void visionTowerBecomesLlamaCppsQwen3vlMergerProjector() {
        for (String arch : new String[] {"qwen35", "qwen35moe"}) {
            GgufFile src = dialect(arch, GgmlType.F16).header();
            Translation t = translated(src);
            GgufFile h = t.header();
            assertEquals("qwen35 (clip)", t.handler());
            assertEquals(Face.CLIP, t.face());
            assertEquals("clip", h.kv("general.architecture").value());
            assertEquals("qwen3vl_merger", h.kv("clip.projector_type").value());
            assertEquals(1, h.kv("clip.vision.block_count").value());
            assertEquals(8, h.kv("clip.vision.embedding_length").value());
            assertEquals(2, h.kv("clip.vision.attention.head_count").value());
            assertEquals(4, h.kv("clip.vision.patch_size").value());
            assertEquals(2, h.kv("clip.vision.spatial_merge_size").value());
            assertEquals(16, h.kv("clip.vision.projection_dim").value());
            assertEquals(4304, h.kv("clip.vision.feed_forward_length").value());
            assertEquals(768, h.kv("clip.vision.image_size").value());
            assertEquals(1e-6f, h.kv("clip.vision.attention.layer_norm_epsilon").value());
            assertEquals(List.of(0.5f, 0.5f, 0.5f), ((GgufArray) h.kv("clip.vision.image_std").value()).values());
            assertEquals(new GgufArray(GgufValueType.BOOL, List.of(false)), h.kv("clip.vision.is_deepstack_layers").value());
            assertEquals(true, h.kv("clip.has_vision_encoder").value());
            assertEquals(true, h.kv("clip.use_gelu").value());
            assertTrue(h.kvs().stream().noneMatch(kv -> kv.key().startsWith(arch + ".") || kv.key().startsWith("tokenizer.")
                    || kv.key().equals("clip.vision.num_channels")), "only what a projector file holds");
            Map<String, GgufTensorInfo> out = new TreeMap<>();
            h.tensors().forEach(i -> out.put(i.name(), i));
            assertEquals(List.of("mm.0.weight", "mm.2.weight", "v.blk.0.attn_out.weight", "v.blk.0.attn_qkv.bias", "v.blk.0.attn_qkv.weight",
                    "v.blk.0.ffn_down.weight", "v.blk.0.ffn_up.weight", "v.blk.0.ln1.weight", "v.blk.0.ln2.weight", "v.patch_embd.bias",
                    "v.patch_embd.weight", "v.patch_embd.weight.1", "v.position_embd.weight", "v.post_ln.weight"), List.copyOf(out.keySet()));
            assertArrayEquals(new long[] {8, 24}, out.get("v.blk.0.attn_qkv.weight").ne());
            assertArrayEquals(new long[] {24}, out.get("v.blk.0.attn_qkv.bias").ne());
            assertArrayEquals(new long[] {4, 4, 3, 2}, out.get("v.patch_embd.weight").ne());
            assertArrayEquals(new long[] {4, 4, 3, 2}, out.get("v.patch_embd.weight.1").ne());
            assertEquals(GgmlType.F32, out.get("v.patch_embd.weight.1").type());
            assertEquals(GgmlType.F32, out.get("v.position_embd.weight").type());
            assertEquals(GgmlType.F16, out.get("mm.0.weight").type());
            assertEquals(src.tensor("v.merger.linear_fc1.weight").offset(), out.get("mm.0.weight").offset(), "renamed tensors keep their bytes");
        }
    }

    @Test
    void qkvIsTheThreeTensorsOneAfterAnotherAndPatchSlicesAreComputedFromTheF16() {
        TinyGguf tiny = dialect("qwen35", GgmlType.F16);
        GgufFile src = tiny.header();
        byte[] blob = tiny.bytes();
        Translation t = translated(src);
        ByteSource file = TranslatedGguf.assemble(t, BLOB);
        List<Long> qkv = new ArrayList<>();
        for (int i = 0; i < file.segmentCount(); i++) {
            if (file.segment(i) instanceof Segment.BlobSlice s && s.length() == 8 * 8 * 2) {
                qkv.add(s.offset() - src.dataStart());
            }
        }
        assertTrue(qkv.containsAll(List.of(src.tensor("v.blk.0.attn_q.weight").offset(), src.tensor("v.blk.0.attn_k.weight").offset(),
                src.tensor("v.blk.0.attn_v.weight").offset())), "attn_qkv is q, k and v byte for byte: " + qkv);
        ByteBuffer in = ByteBuffer.wrap(blob).order(ByteOrder.LITTLE_ENDIAN);
        long base = src.dataStart() + src.tensor("v.patch_embed.weight").offset();
        int hw = 16, frames = 2, cin = 3, cout = 2;
        for (int slice = 0; slice < 2; slice++) {
            float[] got = computed(file, blob, slice == 0 ? "v.patch_embd.weight temporal" : "v.patch_embd.weight.1 temporal");
            assertEquals(hw * cin * cout, got.length);
            for (int co = 0; co < cout; co++) {
                for (int ci = 0; ci < cin; ci++) {
                    for (int i = 0; i < hw; i++) {
                        // register_qwen35moe_patch_embed_split: src h + w*W + t*W*H + (c_out*C_in + c_in)*W*H*T
                        long srcIdx = i + (long) hw * (slice + frames * (co * cin + ci));
                        float want = Float.float16ToFloat(in.getShort((int) (base + 2 * srcIdx)));
                        float have = got[i + hw * (ci + cin * co)];
                        assertEquals(Float.floatToRawIntBits(want), Float.floatToRawIntBits(have),
                                "slice " + slice + " out " + co + " in " + ci + " element " + i);
                    }
                }
            }
        }
        GgufFile back = GgufReader.read(MemorySegment.ofArray(DialectsTest.materialize(file, blob)));
        assertEquals(t.header().tensors().size(), back.tensors().size());
        assertEquals("qwen3vl_merger", back.kv("clip.projector_type").value());
    }

    @Test
    void aSliceLargerThanOneChunkIsComputedChunkByChunk() {
        int cin = 3, cout = 400, hw = 256;               // 1200 units of 1 KiB output: two chunks, the second partial
        TinyGguf tiny = new TinyGguf().str("general.architecture", "qwen35").u32("qwen35.embedding_length", 16)
                .u32("qwen35.vision.block_count", 1).u32("qwen35.vision.embedding_length", 8).u32("qwen35.vision.attention.head_count", 2)
                .u32("qwen35.vision.patch_size", 16)
                .tensor("v.patch_embed.weight", GgmlType.F16, 16, 16, 2, (long) cout * cin);
        GgufFile src = tiny.header();
        byte[] blob = tiny.bytes();
        ByteSource file = TranslatedGguf.assemble(translated(src), new BlobRef(BLOB.digest(), blob.length));
        ByteBuffer in = ByteBuffer.wrap(blob).order(ByteOrder.LITTLE_ENDIAN);
        long base = src.dataStart() + src.tensor("v.patch_embed.weight").offset();
        int slices = 0;
        for (int i = 0; i < file.segmentCount(); i++) {
            if (!(file.segment(i) instanceof Segment.Converted c)) {
                continue;
            }
            int slice = c.data().describe().startsWith("v.patch_embd.weight.1 ") ? 1 : 0;
            assertEquals((long) hw * cin * cout * 4, c.length());
            long chunks = (c.length() + c.data().chunkBytes() - 1) / c.data().chunkBytes();
            assertEquals(2, chunks);
            long at = 0;
            for (long chunk = 0; chunk < chunks; chunk++) {
                float[] got = new float[(int) (c.data().chunkLength(chunk) / 4)];
                c.data().compute(chunk, List.of(MemorySegment.ofArray(blob)), MemorySegment.ofArray(got));
                for (int k = 0; k < got.length; k++, at++) {
                    long unit = at / hw;                 // output unit c_out * cin + c_in
                    long srcIdx = at % hw + (long) hw * (slice + 2 * unit);
                    assertEquals(Float.floatToRawIntBits(Float.float16ToFloat(in.getShort((int) (base + 2 * srcIdx)))),
                            Float.floatToRawIntBits(got[k]), "slice " + slice + " element " + at);
                }
            }
            slices++;
        }
        assertEquals(2, slices);
    }

    @Test
    void aTextOnlyFileOrLlamaCppsOwnFormHasNoClipFace() {
        GgufFile text = new TinyGguf().str("general.architecture", "qwen35").kv("qwen35.ssm.v_head_reordered", GgufValueType.BOOL, true)
                .tensor("blk.0.attn_norm.weight", GgmlType.F32, 8).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.clip(text));
        GgufFile upstream = new TinyGguf().str("general.architecture", "qwen35").u32("qwen35.block_count", 1)
                .tensor("blk.0.attn_norm.weight", GgmlType.F32, 8).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.clip(upstream));
    }

    @Test
    void contradictingHeadersAreRefusedWhole() {
        assertRefused(dialect("qwen35", GgmlType.F32).header(), "v.patch_embed.weight is F32, not F16");
        GgufFile noK = new TinyGguf().str("general.architecture", "qwen35").u32("qwen35.embedding_length", 16)
                .u32("qwen35.vision.block_count", 1).u32("qwen35.vision.embedding_length", 8).u32("qwen35.vision.attention.head_count", 2)
                .u32("qwen35.vision.patch_size", 4)
                .tensor("v.blk.0.attn_q.weight", GgmlType.F16, 8, 8).tensor("v.blk.0.attn_v.weight", GgmlType.F16, 8, 8)
                .tensor("v.patch_embed.weight", GgmlType.F16, 4, 4, 2, 6).header();
        assertRefused(noK, "v.blk.0.attn_k.weight is missing");
        GgufFile oddChannels = new TinyGguf().str("general.architecture", "qwen35").u32("qwen35.embedding_length", 16)
                .u32("qwen35.vision.block_count", 1).u32("qwen35.vision.embedding_length", 8).u32("qwen35.vision.attention.head_count", 2)
                .u32("qwen35.vision.patch_size", 4).u32("qwen35.vision.num_channels", 4)
                .tensor("v.patch_embed.weight", GgmlType.F16, 4, 4, 2, 6).header();
        assertRefused(oddChannels, "not [w, h, 2, out * 4]");
        GgufFile noKeys = new TinyGguf().str("general.architecture", "qwen35").kv("qwen35.ssm.v_head_reordered", GgufValueType.BOOL, true)
                .tensor("v.patch_embed.weight", GgmlType.F16, 4, 4, 2, 6).header();
        assertRefused(noKeys, "no clip.vision.block_count");
    }

    private static void assertRefused(GgufFile g, String reason) {
        Outcome o = Dialects.clip(g);
        Outcome.Refused r = assertInstanceOf(Outcome.Refused.class, o, o::describe);
        assertTrue(r.reason().contains(reason), r.reason() + " should say " + reason);
    }

    /** The computed F32 values of the tensor whose description starts with {@code prefix} (one chunk). */
    private static float[] computed(ByteSource file, byte[] blob, String prefix) {
        for (int i = 0; i < file.segmentCount(); i++) {
            if (file.segment(i) instanceof Segment.Converted c && c.data().describe().startsWith(prefix)) {
                MemorySegment dst = MemorySegment.ofArray(new float[(int) (c.length() / 4)]);
                c.data().compute(0, List.of(MemorySegment.ofArray(blob)), dst);
                return dst.toArray(ValueLayout.JAVA_FLOAT);
            }
        }
        throw new AssertionError("no computed tensor " + prefix);
    }
}
