package dev.modelfs.dialect;

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
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Gemma 4 in Ollama's dialect (docs/FORMATS.md §12.6, §12.8): the markers of {@code detect_ollama_gemma4}, the
 * text face's tokenizer fix and hidden towers, the clip face's keys, and the refusals.
 */
class Gemma4DialectTest {
    private static final BlobRef BLOB = new BlobRef(Digest.parse("sha256:" + "cd".repeat(32)).orElseThrow(), 1 << 20);

    /** A gemma4 file as Ollama's converter writes it: tokenizer model llama with merges, a vision tower, an audio encoder. */
    static TinyGguf ollamaGemma4() {
        return new TinyGguf().str("general.architecture", "gemma4").u32("gemma4.block_count", 1).u32("gemma4.embedding_length", 8)
                .u32("gemma4.vision.block_count", 1).u32("gemma4.vision.embedding_length", 4).u32("gemma4.vision.feed_forward_length", 8)
                .u32("gemma4.vision.attention.head_count", 1).u32("gemma4.vision.patch_size", 2)
                .f32("gemma4.vision.attention.layer_norm_epsilon", 1e-6f).u32("gemma4.audio.block_count", 1).vocab(4)
                .str("tokenizer.ggml.pre", "gemma4")
                .kv("tokenizer.ggml.merges", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, List.of("t t0")))
                .tensor("blk.0.attn_q.weight", GgmlType.F16, 8, 8).tensor("blk.0.ffn_gate_inp.per_expert_scale", GgmlType.F32, 2)
                .tensor("mm.input_projection.weight", GgmlType.F16, 4, 8).tensor("token_embd.weight", GgmlType.F16, 8, 4)
                .tensor("v.blk.0.ln1.weight", GgmlType.F32, 4).tensor("v.patch_embd.weight", GgmlType.F16, 2, 2, 3, 4)
                .tensor("v.position_embd.weight", GgmlType.F32, 4, 8, 2).tensor("a.blk.0.ln1.weight", GgmlType.F32, 4)
                .tensor("mm.a.input_projection.weight", GgmlType.F16, 4, 8);
    }

    private static List<String> names(GgufFile h) {
        return h.tensors().stream().map(GgufTensorInfo::name).toList();
    }

    @Test
    void textFaceFlipsTheTokenizerModelAndHidesTheTowers() {
        GgufFile src = ollamaGemma4().header();
        Translation t = DialectsTest.translated(Dialects.text(src));
        assertEquals("gemma4", t.handler());
        assertEquals("gemma4", t.header().kv("tokenizer.ggml.model").value());
        assertEquals(List.of("blk.0.attn_q.weight", "blk.0.ffn_down_exps.scale", "token_embd.weight"), names(t.header()));
        assertEquals(src.tensor("blk.0.ffn_gate_inp.per_expert_scale").offset(), t.header().tensor("blk.0.ffn_down_exps.scale").offset());
        assertTrue(t.slicesOnly());
        assertEquals(6, t.changes().stream().filter(c -> c.kind() == TensorChange.Kind.DROPPED).count());
        assertEquals(List.of("~tokenizer.ggml.model"), t.keyEdits());
        assertEquals(src.kv("tokenizer.ggml.merges"), t.header().kv("tokenizer.ggml.merges"), "the merges stay the blob's bytes");
    }

    @Test
    void aTextOnlyFileIsRecognisedByItsTokenizerModel() {
        GgufFile textOnly = new TinyGguf().str("general.architecture", "gemma4").vocab(2)
                .kv("tokenizer.ggml.merges", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, List.of("t 0")))
                .tensor("token_embd.weight", GgmlType.F16, 8, 2).header();
        Translation t = DialectsTest.translated(Dialects.text(textOnly));
        assertEquals("gemma4", t.header().kv("tokenizer.ggml.model").value());
        assertTrue(t.changes().isEmpty());
        assertInstanceOf(Outcome.Untouched.class, Dialects.clip(textOnly), "no vision tower, no mmproj.gguf");
        // llama.cpp's own conversion: tokenizer model gemma4, no towers
        GgufFile upstream = new TinyGguf().str("general.architecture", "gemma4").str("tokenizer.ggml.model", "gemma4")
                .tensor("token_embd.weight", GgmlType.F16, 8, 2).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(upstream));
        assertInstanceOf(Outcome.Untouched.class, Dialects.clip(upstream));
    }

    @Test
    void clipFaceIsAGemma4vProjectorFileWithoutTheAudioEncoder() {
        Translation t = DialectsTest.translated(Dialects.clip(ollamaGemma4().header()));
        GgufFile h = t.header();
        assertEquals("gemma4 (clip)", t.handler());
        assertEquals("clip", h.kv("general.architecture").value());
        assertEquals("gemma4v", h.kv("clip.vision.projector_type").value());
        assertEquals(224, h.kv("clip.vision.image_size").value());
        assertEquals(8, h.kv("clip.vision.projection_dim").value());
        assertEquals(4, h.kv("clip.vision.embedding_length").value());
        assertEquals(1e-6f, h.kv("clip.vision.attention.layer_norm_epsilon").value());
        assertEquals(true, h.kv("clip.has_vision_encoder").value());
        assertEquals(List.of(0f, 0f, 0f), ((GgufArray) h.kv("clip.vision.image_mean").value()).values());
        assertEquals(List.of(1f, 1f, 1f), ((GgufArray) h.kv("clip.vision.image_std").value()).values());
        assertTrue(h.kvs().stream().noneMatch(kv -> kv.key().startsWith("gemma4.") || kv.key().startsWith("tokenizer.")));
        assertEquals(List.of("mm.input_projection.weight", "v.blk.0.ln1.weight", "v.patch_embd.weight", "v.position_embd.weight"), names(h));
        assertEquals(Map.of("v.patch_embd.weight", new TensorOp.PromoteToF32(GgmlType.F16)), t.ops());
        assertEquals(GgmlType.F32, h.tensor("v.position_embd.weight").type());
        List<String> audio = t.changes().stream().filter(c -> c.detail().contains("gemma4a")).map(TensorChange::from).toList();
        assertEquals(List.of("a.blk.0.ln1.weight", "mm.a.input_projection.weight"), audio);
        byte[] file = DialectsTest.materialize(TranslatedGguf.assemble(t, BLOB), ollamaGemma4().bytes());
        GgufFile back = GgufReader.read(MemorySegment.ofArray(file));
        assertEquals(names(h), names(back));
        assertEquals("gemma4v", back.kv("clip.vision.projector_type").value());
    }

    @Test
    void headersThatContradictThemselvesAreRefusedWhole() {
        GgufFile noMerges = new TinyGguf().str("general.architecture", "gemma4").vocab(2).tensor("token_embd.weight", GgmlType.F16, 8, 2)
                .tensor("v.patch_embd.weight", GgmlType.F16, 2, 2, 3, 4).header();
        DialectsTest.assertRefused(Dialects.text(noMerges), "no tokenizer.ggml.merges");
        GgufFile noVisionKeys = new TinyGguf().str("general.architecture", "gemma4").u32("gemma4.embedding_length", 8)
                .tensor("v.patch_embd.weight", GgmlType.F16, 2, 2, 3, 4).header();
        DialectsTest.assertRefused(Dialects.clip(noVisionKeys), "no clip.vision.block_count");
        GgufFile noProjector = ollamaGemma4().header();
        noProjector = new GgufFile(noProjector.version(), noProjector.alignment(), noProjector.kvs(),
                noProjector.tensors().stream().filter(i -> !i.name().equals("mm.input_projection.weight")).toList(), noProjector.dataStart());
        DialectsTest.assertRefused(Dialects.clip(noProjector), "no mm.input_projection.weight");
        GgufFile wrongType = new TinyGguf().str("general.architecture", "gemma4").str("gemma4.vision.block_count", "one")
                .tensor("v.patch_embd.weight", GgmlType.F16, 2, 2, 3, 4).header();
        DialectsTest.assertRefused(Dialects.clip(wrongType), "gemma4.vision.block_count is STRING");
        GgufFile collide = ollamaGemma4().tensor("blk.0.ffn_down_exps.scale", GgmlType.F32, 2).header();
        DialectsTest.assertRefused(Dialects.text(collide), "blk.0.ffn_down_exps.scale");
    }
}
