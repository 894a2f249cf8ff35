package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.Segment;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.store.Digest;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Ollama's {@code handle_nemotron_h_omni_clip} (docs/FORMATS.md §12.17) on a header laid out as Ollama's
 * {@code convert_nemotron_h.go} writes Nemotron 3 Omni: the {@code nemotron_v2_vl} projector file, the position table
 * resampled bilinearly with aligned corners, the linear patch embedding read as a conv kernel.
 */
class NemotronHOmniClipTest {
    private static final int EMB = 8;

    /** A RADIO-style tower of one block (embedding 8, patch 4, 3 channels), a side-4 position table, for {@code image} pixels. */
    static TinyGguf omni(int image, long tableSide) {
        return new TinyGguf().str("general.architecture", "nemotron_h_omni").u32("nemotron_h_omni.embedding_length", 16)
                .u32("nemotron_h_omni.expert_count", 4)
                .u32("nemotron_h_omni.vision.block_count", 1).u32("nemotron_h_omni.vision.embedding_length", EMB)
                .u32("nemotron_h_omni.vision.feed_forward_length", 32).u32("nemotron_h_omni.vision.attention.head_count", 2)
                .f32("nemotron_h_omni.vision.attention.layer_norm_epsilon", 1e-6f).u32("nemotron_h_omni.vision.patch_size", 4)
                .u32("nemotron_h_omni.vision.image_size", image).u32("nemotron_h_omni.vision.num_channels", 3)
                .u32("nemotron_h_omni.vision.projector.scale_factor", 2).u32("nemotron_h_omni.vision.image_token_id", 7)
                .u32("nemotron_h_omni.audio.block_count", 1).vocab(8)
                .tensor("token_embd.weight", GgmlType.F16, 16, 8)
                .tensor("v.position_embd", GgmlType.F16, EMB, tableSide * tableSide)
                .tensor("v.cls_embd", GgmlType.F16, EMB, 2)
                .tensor("v.patch_embd.weight", GgmlType.F16, 48, EMB)
                .tensor("v.blk.0.attn_q.weight", GgmlType.F16, EMB, EMB)
                .tensor("mm.norm.weight", GgmlType.F32, 32)
                .tensor("mm.1.weight", GgmlType.F16, 32, 16)
                .tensor("mm.2.weight", GgmlType.F16, 16, 16)
                .tensor("a.blk.0.attn_q.weight", GgmlType.F16, 8, 8)
                .tensor("mm.a.1.weight", GgmlType.F16, 8, 16);
    }

    private static Translation clip(GgufFile g) {
        Outcome o = Dialects.clip(g);
        return assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
    }

    @Test
    void theProjectorFileHasTheClipKeysAndLlamaCppsTensorNames() {
        Translation t = clip(omni(12, 4).header());
        GgufFile h = t.header();
        assertEquals("nemotron_h_omni (clip)", t.handler());
        assertEquals("clip", h.kv("general.architecture").value());
        assertEquals("nemotron_v2_vl", h.kv("clip.vision.projector_type").value());
        assertEquals(false, h.kv("clip.has_audio_encoder").value());
        assertEquals(true, h.kv("clip.has_vision_encoder").value());
        assertEquals(1, h.kv("clip.vision.block_count").value());
        assertEquals(16, h.kv("clip.vision.projection_dim").value());
        assertEquals(2, h.kv("clip.vision.projector.scale_factor").value());
        assertEquals(7, h.kv("clip.vision.image_token_id").value());
        assertEquals(0.48145466f, ((GgufArray) h.kv("clip.vision.image_mean").value()).values().getFirst(), "RADIO's default mean");
        assertNull(h.kv("nemotron_h_omni.embedding_length"));
        assertNull(h.kv("tokenizer.ggml.tokens"));
        Map<String, GgufTensorInfo> out = new LinkedHashMap<>();
        h.tensors().forEach(i -> out.put(i.name(), i));
        assertEquals(List.of("v.position_embd.weight", "v.class_embd", "v.patch_embd.weight", "v.blk.0.attn_q.weight", "mm.model.mlp.0.weight",
                "mm.model.mlp.1.weight", "mm.model.mlp.3.weight"), List.copyOf(out.keySet()));
        assertArrayEquals(new long[] {EMB, 9}, out.get("v.position_embd.weight").ne(), "(12 / 4)² positions");
        assertArrayEquals(new long[] {4, 4, 3, EMB}, out.get("v.patch_embd.weight").ne());
        for (String f32 : new String[] {"v.position_embd.weight", "v.class_embd", "v.patch_embd.weight"}) {
            assertEquals(GgmlType.F32, out.get(f32).type(), f32);
        }
        assertEquals(GgmlType.F16, out.get("mm.model.mlp.1.weight").type());
        List<String> changes = t.changes().stream().map(c -> c.kind() + " " + c.from()).toList();
        assertTrue(changes.contains("DROPPED a.blk.0.attn_q.weight") && changes.contains("DROPPED mm.a.1.weight")
                && changes.contains("DROPPED token_embd.weight"), changes.toString());
    }

    @Test
    void thePositionTableIsResampledBilinearlyWithAlignedCorners() {
        TinyGguf tiny = omni(12, 4);   // a side-4 table to a side-3 grid: source coordinates 0, 1.5, 3
        GgufFile src = tiny.header();
        byte[] blob = tiny.bytes();
        ByteBuffer in = ByteBuffer.wrap(blob).order(ByteOrder.LITTLE_ENDIAN);
        int base = (int) (src.dataStart() + src.tensor("v.position_embd").offset());
        float[][] table = new float[16][EMB];
        for (int p = 0; p < 16; p++) {
            for (int e = 0; e < EMB; e++) {
                table[p][e] = (p * 3 + e) / 8f - 2f;   // exact in F16
                in.putShort(base + 2 * (p * EMB + e), Float.floatToFloat16(table[p][e]));
            }
        }
        ByteSource file = TranslatedGguf.assemble(clip(src), new BlobRef(Digest.parse("sha256:" + "12".repeat(32)).orElseThrow(), blob.length));
        float[] got = computed(file, blob, "v.position_embd.weight bilinear");
        assertEquals(9 * EMB, got.length);
        for (int y = 0; y < 3; y++) {
            for (int x = 0; x < 3; x++) {
                double sy = y * 1.5, sx = x * 1.5;
                int y0 = (int) sy, x0 = (int) sx, y1 = Math.min(y0 + 1, 3), x1 = Math.min(x0 + 1, 3);
                for (int e = 0; e < EMB; e++) {   // the bilinear formula in double (torch's align_corners=True)
                    double want = (table[y0 * 4 + x0][e] * (1 - (sx - x0)) + table[y0 * 4 + x1][e] * (sx - x0)) * (1 - (sy - y0))
                            + (table[y1 * 4 + x0][e] * (1 - (sx - x0)) + table[y1 * 4 + x1][e] * (sx - x0)) * (sy - y0);
                    assertEquals(want, got[(y * 3 + x) * EMB + e], 1e-6, "position (" + y + ", " + x + ") element " + e);
                }
            }
        }
        assertEquals(table[15][3], got[8 * EMB + 3], 0f, "the corners are the source's corners");
    }

    @Test
    void aTableOfTheGridsSideIsOnlyWidenedAndBadLayoutsAreRefused() {
        Translation same = clip(omni(16, 4).header());
        assertTrue(same.changes().stream().anyMatch(c -> c.from().equals("v.position_embd") && c.detail().equals("F16 -> F32")), same.changes().toString());
        Outcome notSquare = Dialects.clip(new TinyGguf().str("general.architecture", "nemotron_h_omni").u32("nemotron_h_omni.embedding_length", 16)
                .u32("nemotron_h_omni.vision.embedding_length", EMB).u32("nemotron_h_omni.vision.patch_size", 4)
                .u32("nemotron_h_omni.vision.image_size", 12).tensor("v.position_embd", GgmlType.F16, EMB, 15).header());
        assertTrue(assertInstanceOf(Outcome.Refused.class, notSquare).reason().contains("v.position_embd has dimensions [8, 15]"), notSquare::describe);
        Outcome typed = Dialects.clip(new TinyGguf().str("general.architecture", "nemotron_h_omni").u32("nemotron_h_omni.embedding_length", 16)
                .f32("nemotron_h_omni.vision.patch_size", 4f).tensor("v.position_embd", GgmlType.F16, EMB, 16).header());
        assertTrue(assertInstanceOf(Outcome.Refused.class, typed).reason().contains("patch_size"), typed::describe);
        assertInstanceOf(Outcome.Untouched.class, Dialects.clip(new TinyGguf().str("general.architecture", "nemotron_h_moe")
                .tensor("v.position_embd", GgmlType.F16, EMB, 16).header()), "only nemotron_h_omni");
    }

    /** The F32 values of the converted segment whose description starts with {@code prefix}, computed over {@code blob}. */
    static float[] computed(ByteSource file, byte[] blob, String prefix) {
        for (int i = 0; i < file.segmentCount(); i++) {
            if (file.segment(i) instanceof Segment.Converted c && c.data().describe().startsWith(prefix)) {
                MemorySegment out = MemorySegment.ofArray(new byte[(int) c.length()]);
                long chunks = (c.length() + c.data().chunkBytes() - 1) / c.data().chunkBytes();
                for (long k = 0; k < chunks; k++) {
                    c.data().compute(k, List.of(MemorySegment.ofArray(blob)), out.asSlice(k * c.data().chunkBytes(), c.data().chunkLength(k)));
                }
                float[] v = new float[(int) (c.length() / 4)];
                ByteBuffer.wrap(out.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(v);
                return v;
            }
        }
        throw new AssertionError("no converted segment " + prefix);
    }
}
