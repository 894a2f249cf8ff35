package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
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
import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The translation planner (docs/FORMATS.md §12): detection by markers, each handler's edits as Ollama's
 * {@code llama-ollama-compat.cpp} makes them, whole refusals of headers that contradict themselves, and the
 * assembled file read back by the GGUF reader.
 */
class DialectsTest {
    private static final BlobRef BLOB = new BlobRef(Digest.parse("sha256:" + "ab".repeat(32)).orElseThrow(), 1 << 20);

    static Translation translated(Outcome o) {
        return assertInstanceOf(Outcome.Translated.class, o, () -> o.describe()).translation();
    }

    @Test
    void gemma3TextFaceInjectsCopiesTruncatesAndDropsTheVisionTower() {
        GgufFile src = TinyGguf.gemma3Dialect().header();
        Translation t = translated(Dialects.text(src));
        GgufFile h = t.header();
        assertEquals("gemma3", t.handler());
        assertEquals(1e-6f, h.kv("gemma3.attention.layer_norm_rms_epsilon").value());
        assertEquals(1_000_000f, h.kv("gemma3.rope.freq_base").value());
        assertEquals(10_000f, h.kv("gemma3.rope.freq_base_swa").value());
        assertEquals("linear", h.kv("gemma3.rope.scaling.type").value());   // context 131072: the 4B-and-up scaling
        assertEquals(8.0f, h.kv("gemma3.rope.scaling.factor").value());
        assertEquals(Gemma3Text.CHAT_TEMPLATE, h.kv("tokenizer.chat_template").value());
        for (String k : new String[] {"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"}) {
            assertEquals(16, ((GgufArray) h.kv(k).value()).size(), k + " cut to token_embd's 16 rows");
        }
        assertEquals(List.of("token_embd.weight", "blk.0.attn_norm.weight", "output_norm.weight"),
                h.tensors().stream().map(GgufTensorInfo::name).toList());
        for (GgufTensorInfo info : h.tensors()) {
            assertEquals(src.tensor(info.name()), info, "kept tensors keep their blob offsets");
        }
        assertTrue(t.slicesOnly());
        assertEquals(8, t.changes().size());
        assertTrue(t.changes().stream().allMatch(c -> c.kind() == TensorChange.Kind.DROPPED));
        assertEquals(src.kv("gemma3.block_count"), h.kv("gemma3.block_count"), "untouched KVs keep their raw range in the blob");
    }

    @Test
    void gemma3SentencePieceVocabularyGetsNoSpacePrefix() {
        // tokenizer.ggml.model "llama" (TinyGguf.vocab): Ollama wrote no add_space_prefix, llama.cpp's converter writes false
        GgufFile h = translated(Dialects.text(TinyGguf.gemma3Dialect().header())).header();
        assertEquals(GgufValueType.BOOL, h.kv(Gemma3n.ADD_SPACE_PREFIX).type());
        assertEquals(false, h.kv(Gemma3n.ADD_SPACE_PREFIX).value());
        GgufFile stated = translated(Dialects.text(TinyGguf.gemma3Dialect().kv(Gemma3n.ADD_SPACE_PREFIX, GgufValueType.BOOL, true).header())).header();
        assertEquals(true, stated.kv(Gemma3n.ADD_SPACE_PREFIX).value(), "a stored flag is left as it is");
        GgufFile bpe = translated(Dialects.text(TinyGguf.gemma3Dialect().replace("tokenizer.ggml.model", GgufValueType.STRING, "gpt2").header())).header();
        assertEquals("gpt2", bpe.kv("tokenizer.ggml.model").value());
        assertNull(bpe.kv(Gemma3n.ADD_SPACE_PREFIX), "a BPE vocabulary gets no flag (llama.cpp's converter writes none)");
    }

    @Test
    void aGemma3FileWithoutQuirksIsUntouched() {
        GgufFile plain = new TinyGguf().str("general.architecture", "gemma3").f32("gemma3.attention.layer_norm_rms_epsilon", 1e-6f)
                .vocab(4).tensor("token_embd.weight", GgmlType.F32, 8, 4).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(plain));
        assertInstanceOf(Outcome.Untouched.class, Dialects.clip(plain));
        GgufFile llama = new TinyGguf().str("general.architecture", "llama").vocab(4).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(llama));
    }

    @Test
    void embeddinggemmaIsNotTakenForGemma3() {
        // dense.0.weight makes it embeddinggemma's (EmbeddingGemmaTest), never gemma3's; without dense.1.weight it is refused
        GgufFile g = new TinyGguf().str("general.architecture", "gemma3").vocab(4).tensor("token_embd.weight", GgmlType.F32, 8, 4)
                .tensor("dense.0.weight", GgmlType.F32, 8, 8).header();
        assertEquals("embeddinggemma", assertInstanceOf(Outcome.Refused.class, Dialects.text(g)).handler());
    }

    @Test
    void gemma3ClipFaceIsAProjectorFile() {
        GgufFile src = TinyGguf.gemma3Dialect().header();
        Translation t = translated(Dialects.clip(src));
        GgufFile h = t.header();
        assertEquals("clip", h.kv("general.architecture").value());
        assertEquals("gemma3", h.kv("clip.projector_type").value());
        assertEquals(64, h.kv("clip.vision.projection_dim").value());
        assertEquals(32, h.kv("clip.vision.embedding_length").value());
        assertEquals(1e-6f, h.kv("clip.vision.attention.layer_norm_epsilon").value());
        assertEquals(true, h.kv("clip.has_vision_encoder").value());
        assertEquals(List.of(0.5f, 0.5f, 0.5f), ((GgufArray) h.kv("clip.vision.image_mean").value()).values());
        assertTrue(h.kvs().stream().noneMatch(kv -> kv.key().startsWith("gemma3.") || kv.key().startsWith("tokenizer.")));
        assertEquals(List.of("v.patch_embd.weight", "v.position_embd.weight", "v.blk.0.ln1.weight", "v.blk.0.attn_out.weight",
                "v.blk.0.ffn_up.weight", "v.post_ln.weight", "mm.input_projection.weight", "mm.soft_emb_norm.weight"),
                h.tensors().stream().map(GgufTensorInfo::name).toList());
        assertEquals(GgmlType.F32, h.tensor("v.patch_embd.weight").type());
        assertEquals(GgmlType.F32, h.tensor("v.position_embd.weight").type());
        assertEquals(GgmlType.F16, h.tensor("v.blk.0.attn_out.weight").type());
        assertEquals(Map.of("v.patch_embd.weight", new TensorOp.PromoteToF32(GgmlType.F16),
                "v.position_embd.weight", new TensorOp.PromoteToF32(GgmlType.F16)), t.ops());
        assertFalse(t.slicesOnly());
        assertEquals(3, t.changes().stream().filter(c -> c.kind() == TensorChange.Kind.DROPPED).count());
    }

    @Test
    void theAssembledFileReadsBackAsTheTranslatedHeader() {
        for (Outcome o : List.of(Dialects.text(TinyGguf.gemma3Dialect().header()), Dialects.clip(TinyGguf.gemma3Dialect().header()))) {
            Translation t = translated(o);
            ByteSource file = TranslatedGguf.assemble(t, BLOB);
            byte[] blob = TinyGguf.gemma3Dialect().bytes();
            GgufFile back = GgufReader.read(MemorySegment.ofArray(materialize(file, blob)));
            assertEquals(t.header().kvs().stream().map(kv -> kv.key() + "=" + kv.value()).toList(),
                    back.kvs().stream().map(kv -> kv.key() + "=" + kv.value()).toList());
            assertEquals(t.header().tensors().stream().map(i -> i.name() + i.type() + java.util.Arrays.toString(i.ne())).toList(),
                    back.tensors().stream().map(i -> i.name() + i.type() + java.util.Arrays.toString(i.ne())).toList());
            int converted = 0;
            for (int i = 0; i < file.segmentCount(); i++) {
                if (file.segment(i) instanceof Segment.Converted) {
                    converted++;
                }
            }
            assertEquals(t.ops().size(), converted, "only the computed tensors are converted, the rest are blob slices");
        }
    }

    @Test
    void headersThatContradictThemselvesAreRefusedWhole() {
        // fewer tokens than embedding rows
        assertRefused(Dialects.text(gemma3(6, 8, GgmlType.F32, true)), "tokenizer.ggml.tokens has 6 entries for 8");
        // no token embedding at all
        assertRefused(Dialects.text(new TinyGguf().str("general.architecture", "gemma3").u32("gemma3.mm.tokens_per_image", 1)
                .vocab(4).header()), "token_embd.weight is missing");
        // a scores array of another length than the tokens
        GgufFile scores = new TinyGguf().str("general.architecture", "gemma3").u32("gemma3.mm.tokens_per_image", 1)
                .kv("tokenizer.ggml.tokens", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, List.of("a", "b", "c")))
                .kv("tokenizer.ggml.scores", GgufValueType.ARRAY, new GgufArray(GgufValueType.FLOAT32, List.of(0f)))
                .tensor("token_embd.weight", GgmlType.F32, 8, 2).header();
        assertRefused(Dialects.text(scores), "tokenizer.ggml.scores has 1 entries for 3 tokens");
        // a context length of the wrong type
        GgufFile ctx = new TinyGguf().str("general.architecture", "gemma3").str("gemma3.context_length", "long").vocab(2)
                .tensor("token_embd.weight", GgmlType.F32, 8, 2).header();
        assertRefused(Dialects.text(ctx), "gemma3.context_length is STRING");
        // a vision tower without its patch embedding, or without the vision keys
        assertRefused(Dialects.clip(gemma3(8, 8, GgmlType.F32, false)), "no v.patch_embd.weight");
        GgufFile noKeys = new TinyGguf().str("general.architecture", "gemma3").vocab(2).tensor("token_embd.weight", GgmlType.F32, 8, 2)
                .tensor("v.patch_embedding.weight", GgmlType.F16, 8, 8).header();
        assertRefused(Dialects.clip(noKeys), "no clip.vision.block_count");
        // renames that collide
        GgufFile collide = TinyGguf.gemma3Dialect().tensor("v.patch_embd.weight", GgmlType.F32, 4).header();
        assertRefused(Dialects.clip(collide), "v.patch_embd.weight");
    }

    private static GgufFile gemma3(int tokens, int rows, GgmlType type, boolean patch) {
        TinyGguf g = new TinyGguf().str("general.architecture", "gemma3").u32("gemma3.embedding_length", 8)
                .u32("gemma3.vision.block_count", 1).u32("gemma3.vision.embedding_length", 8).u32("gemma3.vision.image_size", 8)
                .u32("gemma3.vision.patch_size", 4).u32("gemma3.vision.attention.head_count", 1).vocab(tokens)
                .tensor("token_embd.weight", type, 8, rows).tensor("v.position_embedding.weight", GgmlType.F16, 8, 4)
                .tensor("mm.mm_input_projection.weight", GgmlType.F16, 8, 8);
        if (patch) {
            g.tensor("v.patch_embedding.weight", GgmlType.F16, 4, 4, 3, 8);
        }
        return g.header();
    }

    static void assertRefused(Outcome o, String reason) {
        Outcome.Refused r = assertInstanceOf(Outcome.Refused.class, o, o::describe);
        assertTrue(r.reason().contains(reason), r.reason() + " should say " + reason);
    }

    @Test
    void mllamaHasNoUpstreamSupport() {
        Outcome o = Dialects.text(new TinyGguf().str("general.architecture", "mllama").vocab(2).header());
        assertInstanceOf(Outcome.NoUpstream.class, o);
        assertTrue(o.describe().contains("no support in upstream llama.cpp"), o.describe());
    }

    @Test
    void llama3TokenizerGapIsFilled() {
        GgufFile g = llama3(true, 128001);
        Translation t = translated(Dialects.text(g));
        assertEquals("llama-bpe", t.header().kv("tokenizer.ggml.pre").value());
        assertEquals(128009, t.header().kv("tokenizer.ggml.eos_token_id").value());
        assertEquals(128009, t.header().kv("tokenizer.ggml.eot_token_id").value());
        assertEquals(List.of(128009), ((GgufArray) t.header().kv("tokenizer.ggml.eos_token_ids").value()).values());
        // a file that names its pre-tokenizer and ends at <|eot_id|> already is upstream's form
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(llama3(false, 128009)));
    }

    private static GgufFile llama3(boolean defaultPre, int eos) {
        List<Object> tokens = new java.util.ArrayList<>(Collections.nCopies(128010, "x"));
        tokens.set(128006, "<|start_header_id|>");
        tokens.set(128009, "<|eot_id|>");
        return new TinyGguf().str("general.architecture", "llama").str("tokenizer.ggml.pre", defaultPre ? "default" : "llama-bpe")
                .u32("tokenizer.ggml.eos_token_id", eos)
                .kv("tokenizer.ggml.tokens", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, tokens)).header();
    }

    @Test
    void aProjectorWithoutTypeDefaultsToMlp() {
        GgufFile g = new TinyGguf().str("general.architecture", "clip").kv("clip.has_vision_encoder", GgufValueType.BOOL, true)
                .tensor("mm.0.weight", GgmlType.F32, 8, 8).header();
        Translation t = translated(Dialects.clip(g));
        assertEquals("mlp", t.header().kv("clip.projector_type").value());
        assertTrue(t.changes().isEmpty());
        GgufFile typed = new TinyGguf().str("general.architecture", "clip").kv("clip.has_vision_encoder", GgufValueType.BOOL, true)
                .str("clip.projector_type", "ldp").header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.clip(typed));
    }

    @Test
    void everyHandlerIsListedOnce() {
        assertEquals(Dialects.handlers().size(), Dialects.handlers().stream().map(DialectHandler::name).distinct().count());
        assertEquals(Dialects.handlers().size(), Dialects.handlers().stream().map(Object::getClass).distinct().count());
        assertNull(Dialects.handlers().stream().filter(h -> h.name().isEmpty()).findAny().orElse(null));
    }

    /** The file's bytes, with blob slices taken from {@code blob} and converted segments computed. */
    static byte[] materialize(ByteSource file, byte[] blob) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < file.segmentCount(); i++) {
            switch (file.segment(i)) {
                case Segment.Literal l -> out.writeBytes(l.bytes());
                case Segment.Zeros z -> out.writeBytes(new byte[(int) z.length()]);
                case Segment.BlobSlice s -> out.write(blob, (int) s.offset(), (int) s.length());
                case Segment.Converted c -> out.writeBytes(new byte[(int) c.length()]);
            }
        }
        return out.toByteArray();
    }
}
