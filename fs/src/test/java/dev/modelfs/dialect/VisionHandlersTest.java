package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.arch.QkPermutation;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.bytes.Segment;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufReader;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.store.Digest;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The vision dialect handlers (docs/FORMATS.md §12.2, §12.3): mistral3's text and clip faces as Ollama's
 * {@code handle_mistral3} / {@code handle_mistral3_clip} make them, with the computed tensors (the vision q/k rows
 * in llama.cpp's order, the {@code [IMG_BREAK]} row of the token embedding) checked byte by byte against the blob.
 */
class VisionHandlersTest {
    private static final int IMG_BREAK = 5;

    /** A mistral3 file as Ollama's converter (at a838421ea) writes Ministral 3: the converter's rope keys, a Pixtral tower of 2 blocks. */
    static TinyGguf mistral3Dialect(GgmlType visionQ, boolean imgBreak) {
        List<Object> tokens = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            tokens.add(i == IMG_BREAK && imgBreak ? "[IMG_BREAK]" : "t" + i);
        }
        TinyGguf g = new TinyGguf().str("general.architecture", "mistral3").u32("mistral3.block_count", 1)
                .u32("mistral3.embedding_length", 16).u32("mistral3.attention.head_count", 2)
                .f32("mistral3.rope.scaling.beta_fast", 32f).f32("mistral3.rope.scaling.beta_slow", 1f)
                .f32("mistral3.rope.scaling.mscale_all_dim", 1f).f32("mistral3.rope.scaling_beta", 0.1f)
                .u32("mistral3.vision.block_count", 2).u32("mistral3.vision.embedding_length", 8)
                .u32("mistral3.vision.feed_forward_length", 16).u32("mistral3.vision.attention.head_count", 2)
                .u32("mistral3.vision.image_size", 32).u32("mistral3.vision.patch_size", 8).u32("mistral3.vision.num_channels", 3)
                .f32("mistral3.vision.rope.freq_base", 10000f).u32("mistral3.spatial_merge_size", 2)
                .str("tokenizer.ggml.model", "gpt2").str("tokenizer.ggml.pre", "default")
                .kv("tokenizer.ggml.tokens", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, tokens))
                .kv("tokenizer.ggml.token_type", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, Collections.nCopies(12, 1)))
                .tensor("token_embd.weight", GgmlType.F16, 16, 12)
                .tensor("blk.0.attn_q.weight", GgmlType.F16, 16, 16)
                .tensor("output_norm.weight", GgmlType.F32, 16)
                .tensor("v.patch_conv.weight", GgmlType.F16, 8, 8, 3, 8)
                .tensor("v.encoder_norm.weight", GgmlType.F32, 8);
        for (int b = 0; b < 2; b++) {
            g.tensor("v.blk." + b + ".attn_q.weight", visionQ, visionQ.blockElements() > 1 ? 32 : 8, 8).tensor("v.blk." + b + ".attn_k.weight", GgmlType.F16, 8, 8)
                    .tensor("v.blk." + b + ".attn_output.weight", GgmlType.F16, 8, 8).tensor("v.blk." + b + ".attn_norm.weight", GgmlType.F32, 8)
                    .tensor("v.blk." + b + ".ffn_norm.weight", GgmlType.F32, 8);
        }
        return g.tensor("mm.norm.weight", GgmlType.F32, 8).tensor("mm.patch_merger.merging_layer.weight", GgmlType.F16, 32, 8)
                .tensor("mm.linear_1.weight", GgmlType.F16, 8, 16).tensor("mm.linear_2.weight", GgmlType.F16, 16, 16);
    }

    private static Translation translated(Outcome o) {
        return assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
    }

    @Test
    void mistral3TextFaceCopiesTheRopeKeysNamesTekkenAndDropsTheVisionTower() {
        GgufFile src = mistral3Dialect(GgmlType.F16, true).header();
        Translation t = translated(Dialects.text(src));
        GgufFile h = t.header();
        assertEquals("mistral3", t.handler());
        assertEquals(32f, h.kv("mistral3.rope.scaling.yarn_beta_fast").value());
        assertEquals(1f, h.kv("mistral3.rope.scaling.yarn_beta_slow").value());
        assertEquals(1f, h.kv("mistral3.rope.scaling.yarn_log_multiplier").value());
        assertEquals(0.1f, h.kv("mistral3.attention.temperature_scale").value());
        assertEquals("tekken", h.kv("tokenizer.ggml.pre").value());
        assertEquals(List.of("token_embd.weight", "blk.0.attn_q.weight", "output_norm.weight"),
                h.tensors().stream().map(GgufTensorInfo::name).toList());
        assertTrue(t.slicesOnly(), "the text q/k rows are already in llama.cpp's order");
        // llama.cpp's own conversion (no vision tensors, llama.cpp's key names) is no dialect
        GgufFile upstream = new TinyGguf().str("general.architecture", "mistral3").f32("mistral3.rope.scaling.yarn_beta_fast", 32f)
                .vocab(4).tensor("token_embd.weight", GgmlType.F16, 16, 4).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(upstream));
        assertInstanceOf(Outcome.Untouched.class, Dialects.clip(upstream));
    }

    @Test
    void mistral3ClipFaceIsAPixtralProjectorWithItsComputedTensors() {
        TinyGguf dialect = mistral3Dialect(GgmlType.F16, true);
        byte[] blob = dialect.bytes();
        GgufFile src = dialect.header();
        Translation t = translated(Dialects.clip(src));
        GgufFile h = t.header();
        assertEquals("clip", h.kv("general.architecture").value());
        assertEquals("pixtral", h.kv("clip.projector_type").value());
        assertEquals(16, h.kv("clip.vision.projection_dim").value());
        assertEquals(2, h.kv("clip.vision.spatial_merge_size").value());
        assertEquals(1e-5f, h.kv("clip.vision.attention.layer_norm_epsilon").value());
        assertEquals(true, h.kv("clip.use_silu").value());
        assertTrue(h.kvs().stream().noneMatch(kv -> kv.key().startsWith("mistral3.") || kv.key().startsWith("tokenizer.")));
        List<String> names = h.tensors().stream().map(GgufTensorInfo::name).toList();
        assertEquals(List.of("v.patch_embd.weight", "v.pre_ln.weight", "v.blk.0.attn_q.weight", "v.blk.0.attn_k.weight",
                "v.blk.0.attn_out.weight", "v.blk.0.ln1.weight", "v.blk.0.ln2.weight", "v.blk.1.attn_q.weight", "v.blk.1.attn_k.weight",
                "v.blk.1.attn_out.weight", "v.blk.1.ln1.weight", "v.blk.1.ln2.weight", "mm.input_norm.weight", "mm.patch_merger.weight",
                "mm.1.weight", "mm.2.weight", "v.token_embd.img_break"), names);
        assertEquals(GgmlType.F16, h.tensor("v.patch_embd.weight").type(), "kept as stored, as llama.cpp's converter writes it");
        assertEquals(5, t.ops().size(), "4 vision q/k permutations and the [IMG_BREAK] row");

        byte[] file = materialize(TranslatedGguf.assemble(t, new BlobRef(Digest.parse("sha256:" + "cd".repeat(32)).orElseThrow(), blob.length)),
                blob);
        GgufFile back = GgufReader.read(MemorySegment.ofArray(file));
        // v.token_embd.img_break: row 5 of the F16 token embedding, widened to F32
        GgufTensorInfo embd = src.tensor("token_embd.weight");
        MemorySegment b = MemorySegment.ofArray(blob);
        MemorySegment f = MemorySegment.ofArray(file);
        GgufTensorInfo ib = back.tensor("v.token_embd.img_break");
        assertEquals(GgmlType.F32, ib.type());
        for (int i = 0; i < 16; i++) {
            short half = b.get(ValueLayout.JAVA_SHORT_UNALIGNED, src.dataStart() + embd.offset() + (IMG_BREAK * 16L + i) * 2);
            assertEquals(Float.float16ToFloat(half), f.get(ValueLayout.JAVA_FLOAT_UNALIGNED, back.dataStart() + ib.offset() + i * 4L), "element " + i);
        }
        // v.blk.1.attn_q.weight: stored row hfRowOf(r) at row r
        GgufTensorInfo q = src.tensor("v.blk.1.attn_q.weight");
        GgufTensorInfo tq = back.tensor("v.blk.1.attn_q.weight");
        QkPermutation p = new QkPermutation(2, 8);
        for (int r = 0; r < 8; r++) {
            byte[] want = b.asSlice(src.dataStart() + q.offset() + p.hfRowOf(r) * 16L, 16).toArray(ValueLayout.JAVA_BYTE);
            byte[] got = f.asSlice(back.dataStart() + tq.offset() + r * 16L, 16).toArray(ValueLayout.JAVA_BYTE);
            assertArrayEquals(want, got, "row " + r);
        }
        // renamed tensors are the blob's bytes
        GgufTensorInfo mm1 = back.tensor("mm.1.weight");
        GgufTensorInfo lin1 = src.tensor("mm.linear_1.weight");
        assertArrayEquals(b.asSlice(src.dataStart() + lin1.offset(), lin1.byteSize()).toArray(ValueLayout.JAVA_BYTE),
                f.asSlice(back.dataStart() + mm1.offset(), mm1.byteSize()).toArray(ValueLayout.JAVA_BYTE));
        assertTrue(t.changes().stream().anyMatch(c -> c.kind() == TensorChange.Kind.COMPUTED && c.from().equals("token_embd.weight")
                && c.to().equals("v.token_embd.img_break") && c.detail().contains("[IMG_BREAK]")), t.changes().toString());
    }

    @Test
    void mistral3ClipFaceRefusesWhatItCannotBuild() {
        assertRefused(Dialects.clip(mistral3Dialect(GgmlType.F16, false).header()), "no [IMG_BREAK] token");
        assertRefused(Dialects.clip(mistral3Dialect(GgmlType.Q8_0, true).header()), "v.blk.0.attn_q.weight is Q8_0");
        // the text face does not need either
        translated(Dialects.text(mistral3Dialect(GgmlType.Q8_0, false).header()));
    }

    private static void assertRefused(Outcome o, String reason) {
        Outcome.Refused r = assertInstanceOf(Outcome.Refused.class, o, o::describe);
        assertTrue(r.reason().contains(reason), r.reason() + " should say " + reason);
    }

    /** The file's bytes: blob slices from {@code blob}, converted segments computed chunk by chunk. */
    static byte[] materialize(ByteSource file, byte[] blob) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < file.segmentCount(); i++) {
            switch (file.segment(i)) {
                case Segment.Literal l -> out.writeBytes(l.bytes());
                case Segment.Zeros z -> out.writeBytes(new byte[(int) z.length()]);
                case Segment.BlobSlice s -> out.write(blob, (int) s.offset(), (int) s.length());
                case Segment.Converted c -> {
                    ConvertedData d = c.data();
                    for (long k = 0; k * d.chunkBytes() < d.length(); k++) {
                        byte[] chunk = new byte[(int) d.chunkLength(k)];
                        d.compute(k, List.of(MemorySegment.ofArray(blob)), MemorySegment.ofArray(chunk));
                        out.writeBytes(chunk);
                    }
                }
            }
        }
        return out.toByteArray();
    }
}
