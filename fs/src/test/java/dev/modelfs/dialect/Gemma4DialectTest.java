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
 * Gemma 4 in Ollama's dialect (docs/FORMATS.md §12.6, §12.9): the markers of {@code detect_ollama_gemma4}, the
 * text face's tokenizer fixes (model, token types) and hidden towers, the clip face's keys, its audio encoder, and
 * the refusals.
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

    /** A gemma4 file with a complete audio encoder, as Ollama's converter names its tensors (convert_gemma4.go). */
    static TinyGguf ollamaGemma4WithAudio() {
        return ollamaGemma4WithAudio(ollamaGemma4().u32("gemma4.audio.attention.head_count", 2));
    }

    private static TinyGguf ollamaGemma4WithAudio(TinyGguf withHeadCount) {
        return withHeadCount.u32("gemma4.audio.embedding_length", 4).u32("gemma4.audio.feed_forward_length", 16)
                .f32("gemma4.audio.attention.layer_norm_epsilon", 1e-6f)
                .u32("gemma4.audio.conv_kernel_size", 5)
                .tensor("a.blk.0.ln2.weight", GgmlType.F32, 4).tensor("a.blk.0.layer_pre_norm.weight", GgmlType.F32, 4)
                .tensor("a.blk.0.linear_pos.weight", GgmlType.F16, 4, 4).tensor("a.blk.0.per_dim_scale.weight", GgmlType.F32, 2)
                .tensor("a.conv1d.0.weight", GgmlType.F32, 3, 3, 1, 8).tensor("a.conv1d.1.weight", GgmlType.F32, 3, 3, 8, 2)
                .tensor("a.pre_encode.out.weight", GgmlType.F16, 4, 4).tensor("mm.a.fc.weight", GgmlType.F16, 4, 4)
                .tensor("mm.a.fc.bias", GgmlType.F32, 4);
    }

    @Test
    void clipFaceTranslatesTheAudioEncoderIntoTheSameFileAsGemma4a() {
        GgufFile src = ollamaGemma4WithAudio().header();
        Translation t = DialectsTest.translated(Dialects.clip(src));
        GgufFile h = t.header();
        assertEquals("gemma4v", h.kv("clip.vision.projector_type").value());
        assertEquals("gemma4a", h.kv("clip.audio.projector_type").value());
        assertEquals(true, h.kv("clip.has_audio_encoder").value());
        assertEquals(true, h.kv("clip.has_vision_encoder").value());
        assertEquals(1, h.kv("clip.audio.block_count").value());
        assertEquals(4, h.kv("clip.audio.embedding_length").value());
        assertEquals(16, h.kv("clip.audio.feed_forward_length").value());
        assertEquals(2, h.kv("clip.audio.attention.head_count").value());
        assertEquals(1e-6f, h.kv("clip.audio.attention.layer_norm_epsilon").value());
        assertEquals(128, h.kv("clip.audio.num_mel_bins").value());
        assertEquals(8, h.kv("clip.audio.projection_dim").value(), "the text model's width");
        assertTrue(h.kvs().stream().noneMatch(kv -> kv.key().startsWith("gemma4.")));
        // the SSCP projection takes llama.cpp's name (widened to F32), the output projection the SSCP's old name
        assertEquals(src.tensor("a.pre_encode.out.weight").offset(), h.tensor("a.input_projection.weight").offset());
        assertEquals(GgmlType.F32, h.tensor("a.input_projection.weight").type());
        assertEquals(src.tensor("mm.a.fc.weight").offset(), h.tensor("a.pre_encode.out.weight").offset());
        assertEquals(GgmlType.F16, h.tensor("a.pre_encode.out.weight").type());
        assertEquals(src.tensor("mm.a.fc.bias").offset(), h.tensor("a.pre_encode.out.bias").offset());
        // per block: ln1 -> attn_pre_norm, ln2 -> attn_post_norm, then layer_pre_norm -> ln2, linear_pos -> attn_k_rel
        assertEquals(src.tensor("a.blk.0.ln1.weight").offset(), h.tensor("a.blk.0.attn_pre_norm.weight").offset());
        assertEquals(src.tensor("a.blk.0.ln2.weight").offset(), h.tensor("a.blk.0.attn_post_norm.weight").offset());
        assertEquals(src.tensor("a.blk.0.layer_pre_norm.weight").offset(), h.tensor("a.blk.0.ln2.weight").offset());
        assertEquals(src.tensor("a.blk.0.linear_pos.weight").offset(), h.tensor("a.blk.0.attn_k_rel.weight").offset());
        assertEquals(List.of("a.blk.0.attn_k_rel.weight", "a.blk.0.attn_post_norm.weight", "a.blk.0.attn_pre_norm.weight",
                "a.blk.0.ln2.weight", "a.blk.0.per_dim_scale.weight", "a.conv1d.0.weight", "a.conv1d.1.weight", "a.input_projection.weight",
                "a.pre_encode.out.bias", "a.pre_encode.out.weight", "mm.a.input_projection.weight", "mm.input_projection.weight",
                "v.blk.0.ln1.weight", "v.patch_embd.weight", "v.position_embd.weight"), names(h).stream().sorted().toList());
        assertEquals(Map.of("v.patch_embd.weight", new TensorOp.PromoteToF32(GgmlType.F16),
                "a.input_projection.weight", new TensorOp.PromoteToF32(GgmlType.F16)), t.ops());
        byte[] file = DialectsTest.materialize(TranslatedGguf.assemble(t, BLOB), ollamaGemma4WithAudio().bytes());
        GgufFile back = GgufReader.read(MemorySegment.ofArray(file));
        assertEquals(names(h), names(back));
        assertEquals("gemma4a", back.kv("clip.audio.projector_type").value());
    }

    @Test
    void anIncompleteAudioEncoderIsLeftOutWithItsReasonAndTheVisionTowerStays() {
        GgufFile noConv = ollamaGemma4WithAudio().header();
        noConv = new GgufFile(noConv.version(), noConv.alignment(), noConv.kvs(),
                noConv.tensors().stream().filter(i -> !i.name().equals("a.conv1d.1.weight")).toList(), noConv.dataStart());
        Translation t = DialectsTest.translated(Dialects.clip(noConv));
        assertEquals("gemma4v", t.header().kv("clip.vision.projector_type").value());
        assertTrue(t.header().kvs().stream().noneMatch(kv -> kv.key().startsWith("clip.audio.") || kv.key().equals("clip.has_audio_encoder")));
        assertTrue(names(t.header()).stream().noneMatch(n -> n.startsWith("a.") || n.startsWith("mm.a.")), names(t.header()).toString());
        assertTrue(t.changes().stream().anyMatch(c -> c.from().equals("a.conv1d.0.weight") && c.detail().equals("audio encoder left out: no a.conv1d.1.weight")),
                t.changes().toString());
        GgufFile embedderOnly = ollamaGemma4().header();
        embedderOnly = new GgufFile(embedderOnly.version(), embedderOnly.alignment(), embedderOnly.kvs(),
                embedderOnly.tensors().stream().filter(i -> !i.name().startsWith("a.")).toList(), embedderOnly.dataStart());
        Translation eo = DialectsTest.translated(Dialects.clip(embedderOnly));
        assertTrue(eo.changes().stream().anyMatch(c -> c.from().equals("mm.a.input_projection.weight")
                && c.detail().equals("audio embedder without an audio encoder")), eo.changes().toString());
        assertTrue(eo.header().kv("clip.audio.projector_type") == null);
        GgufFile wrongType = ollamaGemma4WithAudio(ollamaGemma4().str("gemma4.audio.attention.head_count", "two")).header();
        Translation w = DialectsTest.translated(Dialects.clip(wrongType));
        assertTrue(w.changes().stream().anyMatch(c -> c.from().equals("mm.a.fc.weight")
                && c.detail().equals("audio embedder left out: gemma4.audio.attention.head_count is STRING, not UINT32")), w.changes().toString());
    }

    @Test
    void theTokenTypesBecomeThoseOfLlamaCppsConverter() {
        List<Object> tokens = List.of("<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "[multimodal]", "<unused0>", "<|turn>", "<turn|>",
                "<|channel>", "<|\"|>", "<0x0A>", "<0xZZ>", "hello", "<|image>", "added");
        List<Object> ollama = List.of(3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 1, 1, 3, 4);   // special added tokens control, bytes normal
        GgufFile src = new TinyGguf().str("general.architecture", "gemma4").str("tokenizer.ggml.model", "llama")
                .kv("tokenizer.ggml.tokens", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, tokens))
                .kv("tokenizer.ggml.scores", GgufValueType.ARRAY, new GgufArray(GgufValueType.FLOAT32, java.util.Collections.nCopies(16, 0f)))
                .kv("tokenizer.ggml.token_type", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, ollama))
                .kv("tokenizer.ggml.merges", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, List.of("h e")))
                .tensor("token_embd.weight", GgmlType.F16, 8, 16)
                .u32("tokenizer.ggml.padding_token_id", 0).u32("tokenizer.ggml.eos_token_id", 1).u32("tokenizer.ggml.bos_token_id", 2)
                .u32("tokenizer.ggml.unknown_token_id", 3).u32("tokenizer.ggml.mask_token_id", 4).header();
        Translation t = DialectsTest.translated(Dialects.text(src));
        // named specials control, <unusedN> and unnamed added tokens normal, Gemma 4's named tokens control, the
        // rendered ones user-defined, bytes byte, a non-special added token user-defined
        assertEquals(List.of(3, 3, 3, 3, 3, 1, 1, 3, 3, 4, 4, 6, 1, 1, 3, 4),
                ((GgufArray) t.header().kv("tokenizer.ggml.token_type").value()).values());
        assertTrue(t.keyEdits().contains("~tokenizer.ggml.token_type"), t.keyEdits().toString());
        assertEquals(src.kv("tokenizer.ggml.scores"), t.header().kv("tokenizer.ggml.scores"), "the scores stay Ollama's");
        GgufFile shortTypes = new TinyGguf().str("general.architecture", "gemma4").str("tokenizer.ggml.model", "llama")
                .kv("tokenizer.ggml.tokens", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, tokens))
                .kv("tokenizer.ggml.token_type", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(1, 1)))
                .kv("tokenizer.ggml.merges", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, List.of("h e"))).header();
        DialectsTest.assertRefused(Dialects.text(shortTypes), "tokenizer.ggml.token_type is not an INT32 array of the 16 tokens' length");
    }

    @Test
    void clipFaceIsAGemma4vProjectorFileWithoutAnIncompleteAudioEncoder() {
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
        List<String> audio = t.changes().stream().filter(c -> c.detail().contains("left out: no gemma4.audio.embedding_length"))
                .map(TensorChange::from).toList();
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
