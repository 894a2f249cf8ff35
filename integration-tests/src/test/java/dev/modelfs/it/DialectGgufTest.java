package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Ollama's GGUF dialect translated on the fly (issue 33, docs/SEMANTICS.md "Ollama's GGUF dialect") on a real
 * mount of a store made by {@code make_dialect_fixture.py}: tiny transformers models (gemma3 and gemma4 with their
 * vision towers, gemma4's audio encoder too, lfm2, mistral3 with its Pixtral tower, qwen35 with its vision tower, qwen35moe, gptoss, olmo3,
 * qwen25vl and qwen3vl with their vision towers, glmocr with its GLM4V tower) written
 * in Ollama's dialect by
 * a script that follows Ollama's converter, next to llama.cpp's own conversion of the same models. gguf-py
 * compares the translated {@code model.gguf} and {@code mmproj.gguf} with llama.cpp's conversion; llama.cpp
 * (node-llama-cpp) refuses the stored dialect file and runs the translation exactly as the reference; llama.cpp's
 * {@code llama-mtmd-cli} ({@link MtmdCli}) describes a test image through the mount's {@code model.gguf} +
 * {@code mmproj.gguf} with the same tokens as through llama.cpp's conversion (gemma4: a test audio clip too). {@code mllama}
 * (llama3.2-vision), which upstream llama.cpp cannot run, is served as stored and its text model's Hugging Face folder is
 * checked against the source model ({@code dialect_mllama.py}). Gemma 4 in the form of 26B-A4B / 31B (experts, keys shared with
 * values, the full layers' own KV-head count) and the same model with split gate/up experts and no per-expert scales
 * ({@code dialect_gemma4moe.py}) are checked like the others, their folders against the source's logits.
 */
class DialectGgufTest {
    /** The generated fixture (set when the mount is made: {@link Fixture#generate}, cached by its generator's hash). */
    static Path out;

    @RegisterExtension
    static final MountedStore mounted = MountedStore.of("modelfs-dialect-it", work -> {
        String llamaSrc = System.getProperty("modelfs.llamaCppSrc", "node/node_modules/.llama.cpp-src");
        assertTrue(Files.isRegularFile(Path.of(llamaSrc, "convert_hf_to_gguf.py")),
                "llama.cpp's converter missing at " + llamaSrc + " (./test unpacks it)");
        return (out = Fixture.generate("dialect-fixture", "make_dialect_fixture.py", 900, llamaSrc)).resolve("store");
    });

    @Test
    void translatedFilesAreLlamaCppsConversionAndTheBlobStaysUnderOllama() throws Exception {
        mounted.cli().requireChecker(600, "check_dialect.py", out.toString());
    }

    @Test
    void llamaCppRefusesTheDialectAndRunsTheTranslationLikeTheReference() throws Exception {
        Path node = Path.of(System.getProperty("modelfs.nodeDir", "node")).toAbsolutePath();
        assertTrue(Files.isDirectory(node.resolve("node_modules/node-llama-cpp")), "node-llama-cpp not installed in " + node);
        mounted.cli().requireChecker(600, "check_dialect.py", out.toString(), "--llama", node.toString());
    }

    @Test
    void llamaMtmdCliDescribesAnImageThroughTheMountLikeThroughTheReference() throws Exception {
        Path cli = MtmdCli.binary();
        mounted.cli().requireChecker(900, "check_dialect.py", out.toString(), "--mtmd", cli.toString());
    }

    @Test
    void showSaysWhichTranslationAndListsTheTensors() throws Exception {
        JsonNode d = show("dialect-gemma3", true).get("gguf_dialect");
        assertEquals("model.gguf", d.get(0).get("file").asText());
        assertTrue(d.get(0).get("translation").asText().startsWith("gemma3: "), d.toString());
        assertEquals("mmproj.gguf", d.get(1).get("file").asText());
        assertTrue(d.get(1).get("translation").asText().startsWith("gemma3 (clip): "), d.toString());
        List<String> text = new ArrayList<>();
        d.get(0).get("tensors").forEach(t -> text.add(t.get("change").asText() + " " + t.get("from").asText()));
        assertTrue(text.contains("dropped v.patch_embedding.weight") && text.contains("dropped mm.mm_input_projection.weight"), text.toString());
        List<String> clip = new ArrayList<>();
        d.get(1).get("tensors").forEach(t -> clip.add(t.get("change").asText() + " " + t.get("from").asText() + " " + t.get("to").asText()));
        assertTrue(clip.contains("computed v.patch_embedding.weight v.patch_embd.weight"), clip.toString());
        assertTrue(clip.contains("renamed v.post_layernorm.weight v.post_ln.weight"), clip.toString());
        JsonNode g4 = show("dialect-gemma4", true).get("gguf_dialect");
        assertTrue(g4.get(0).get("translation").asText().startsWith("gemma4: "), g4.toString());
        assertTrue(g4.get(1).get("translation").asText().startsWith("gemma4 (clip): "), g4.toString());
        List<String> g4text = new ArrayList<>();
        g4.get(0).get("tensors").forEach(t -> g4text.add(t.get("change").asText() + " " + t.get("from").asText()));
        assertTrue(g4text.contains("dropped v.patch_embd.weight") && g4text.contains("dropped mm.input_projection.weight")
                && g4text.contains("dropped a.conv1d.0.weight"), g4text.toString());
        List<String> g4clip = new ArrayList<>();
        g4.get(1).get("tensors").forEach(t -> g4clip.add(t.get("change").asText() + " " + t.get("from").asText() + " " + t.get("to").asText()));
        assertTrue(g4clip.contains("computed v.patch_embd.weight v.patch_embd.weight") && g4clip.contains("dropped token_embd.weight "), g4clip.toString());
        // the audio encoder joins mmproj.gguf (gemma4a): the SSCP projection widened, the output projection and block leaves renamed
        for (String c : new String[] {"computed a.pre_encode.out.weight a.input_projection.weight", "renamed mm.a.fc.weight a.pre_encode.out.weight",
                "renamed a.blk.0.layer_pre_norm.weight a.blk.0.ln2.weight", "renamed a.blk.0.linear_pos.weight a.blk.0.attn_k_rel.weight"}) {
            assertTrue(g4clip.contains(c), c + " in " + g4clip);
        }
        JsonNode g4bad = show("dialect-gemma4-bad", false).get("gguf_dialect").get(0);
        assertTrue(g4bad.get("translation").asText().contains("no tokenizer.ggml.merges"), g4bad.toString());
        JsonNode lfm2 = show("dialect-lfm2", true).get("gguf_dialect");
        assertEquals(1, lfm2.size(), "no clip face: " + lfm2);
        assertEquals("renamed output_norm.weight token_embd_norm.weight", lfm2.get(0).get("tensors").get(0).get("change").asText() + " "
                + lfm2.get(0).get("tensors").get(0).get("from").asText() + " " + lfm2.get(0).get("tensors").get(0).get("to").asText());
        JsonNode m3 = show("dialect-mistral3", true).get("gguf_dialect");
        assertTrue(m3.get(0).get("translation").asText().startsWith("mistral3: "), m3.toString());
        assertTrue(m3.get(1).get("translation").asText().startsWith("mistral3 (clip): "), m3.toString());
        List<String> m3clip = new ArrayList<>();
        m3.get(1).get("tensors").forEach(t -> m3clip.add(t.get("change").asText() + " " + t.get("from").asText() + " " + t.get("to").asText()));
        assertTrue(m3clip.contains("computed token_embd.weight v.token_embd.img_break")
                && m3clip.contains("computed v.blk.0.attn_q.weight v.blk.0.attn_q.weight")
                && m3clip.contains("renamed v.patch_conv.weight v.patch_embd.weight"), m3clip.toString());
        JsonNode l4 = show("dialect-llama4", true).get("gguf_dialect");
        assertTrue(l4.get(0).get("translation").asText().startsWith("llama4: ") && l4.get(1).get("translation").asText().startsWith("llama4 (clip): "),
                l4.toString());
        JsonNode glmocr = show("dialect-glmocr", true).get("gguf_dialect");   // GLM-OCR: the gate/up halves fused, the patch slices renamed
        List<String> ocr = new ArrayList<>();
        glmocr.forEach(f -> f.get("tensors").forEach(t -> ocr.add(t.get("change").asText() + " " + t.get("from").asText() + " " + t.get("to").asText())));
        assertTrue(glmocr.get(0).get("translation").asText().startsWith("glmocr: ") && glmocr.get(1).get("translation").asText().startsWith("glmocr (clip): ")
                && ocr.contains("computed blk.0.ffn_gate.weight blk.0.ffn_up.weight") && ocr.contains("renamed v.patch_embd_1.weight v.patch_embd.weight.1"), ocr.toString());
        JsonNode mllama = show("dialect-mllama", false).get("gguf_dialect").get(0);
        assertTrue(mllama.get("translation").asText().contains("no support in upstream llama.cpp"), mllama.toString());
        assertTrue(!Files.exists(mounted.cli().mountpoint.resolve("dialect-mllama/ollama/model.gguf")));
        JsonNode badFaces = show("dialect-gemma3-bad", false).get("gguf_dialect");
        JsonNode bad = badFaces.get(0);
        assertTrue(bad.get("translation").asText().contains("tokenizer.ggml.tokens has 300 entries for 400"), bad.toString());
        assertEquals("mmproj.gguf", badFaces.get(1).get("file").asText(), badFaces.toString());
        assertTrue(badFaces.get(1).get("translation").asText().contains("tokenizer.ggml.tokens has 300 entries for 400"),
                "the clip face is refused with the text face: " + badFaces);
        assertTrue(Files.isRegularFile(mounted.cli().mountpoint.resolve("dialect-gemma3-bad/model.gguf")));
        assertTrue(!Files.exists(mounted.cli().mountpoint.resolve("dialect-gemma3-bad/ollama/model.gguf")));
        assertTrue(!Files.exists(mounted.cli().mountpoint.resolve("dialect-gemma3-bad/mmproj.gguf")), "no half-translated mmproj.gguf");
        long lines = mounted.cli().log().lines().filter(l -> l.contains("dialect-gemma3-bad") && l.contains("model.gguf served as stored")).count();
        assertEquals(1, lines, "one log line for the refused dialect header:\n" + mounted.cli().log());
    }

    @Test
    void showListsQwen35sRenamesAndTheVisionTowerLeftOut() throws Exception {
        JsonNode d = show("dialect-qwen35", true).get("gguf_dialect");
        assertEquals(2, d.size(), "text and clip faces: " + d);
        assertTrue(d.get(0).get("translation").asText().startsWith("qwen35: "), d.toString());
        assertEquals("mmproj.gguf", d.get(1).get("file").asText());
        assertTrue(d.get(1).get("translation").asText().startsWith("qwen35 (clip): "), d.toString());
        List<String> clip = new ArrayList<>();
        d.get(1).get("tensors").forEach(t -> clip.add(t.get("change").asText() + " " + t.get("from").asText() + " " + t.get("to").asText()));
        for (String c : new String[] {"computed v.blk.0.attn_q.weight v.blk.0.attn_qkv.weight", "dropped v.blk.0.attn_k.weight ",
                "computed v.patch_embed.weight v.patch_embd.weight", "computed v.patch_embed.weight v.patch_embd.weight.1",
                "renamed v.merger.linear_fc1.weight mm.0.weight", "computed v.pos_embed.weight v.position_embd.weight"}) {
            assertTrue(clip.contains(c), c + " in " + clip);
        }
        List<String> text = new ArrayList<>();
        d.get(0).get("tensors").forEach(t -> text.add(t.get("change").asText() + " " + t.get("from").asText() + " " + t.get("to").asText()));
        assertTrue(text.contains("renamed blk.0.ssm_dt blk.0.ssm_dt.bias") && text.contains("dropped v.patch_embed.weight "), text.toString());
        assertTrue(text.contains("computed mtp.pre_fc_norm_embedding.weight blk.4.nextn.enorm.weight")
                && text.contains("renamed mtp.layers.0.attn_norm.weight blk.4.attn_norm.weight"), text.toString());
        assertEquals(1, show("dialect-qwen35moe", true).get("gguf_dialect").size(), "a text-only qwen35moe has no clip face");
        JsonNode moe = show("dialect-qwen35moe", true).get("gguf_dialect").get(0);
        assertTrue(moe.get("translation").asText().startsWith("qwen35moe: "), moe.toString());
        List<String> experts = new ArrayList<>();
        moe.get("tensors").forEach(t -> experts.add(t.get("change").asText() + " " + t.get("from").asText() + " " + t.get("to").asText()));
        assertTrue(experts.contains("computed mtp.layers.0.mlp.experts.0.gate_proj.weight blk.4.ffn_gate_exps.weight")
                && experts.contains("dropped mtp.layers.0.mlp.experts.3.gate_proj.weight "), experts.toString());
        JsonNode bad = show("dialect-qwen35moe-bad", false).get("gguf_dialect").get(0);
        assertTrue(bad.get("translation").asText().contains("non-contiguous qwen35moe MTP experts for layer 0"), bad.toString());
    }

    @Test
    void showListsQwen25VlsRenamesAndPromotions() throws Exception {
        JsonNode d = show("dialect-qwen25vl", true).get("gguf_dialect");
        assertEquals(2, d.size(), "text and clip faces: " + d);
        assertTrue(d.get(0).get("translation").asText().startsWith("qwen25vl: "), d.toString());
        assertTrue(d.get(1).get("translation").asText().startsWith("qwen25vl (clip): "), d.toString());
        List<String> text = new ArrayList<>();
        d.get(0).get("tensors").forEach(t -> text.add(t.get("change").asText() + " " + t.get("from").asText()));
        assertTrue(text.contains("dropped v.patch_embd_0.weight") && text.contains("dropped v.merger.mlp.0.weight"), text.toString());
        List<String> clip = new ArrayList<>();
        d.get(1).get("tensors").forEach(t -> clip.add(t.get("change").asText() + " " + t.get("from").asText() + " " + t.get("to").asText()));
        for (String c : new String[] {"computed v.patch_embd_1.weight v.patch_embd.weight.1", "renamed v.merger.ln_q.weight v.post_ln.weight",
                "renamed v.merger.mlp.2.bias mm.2.bias", "dropped token_embd.weight "}) {
            assertTrue(clip.contains(c), c + " in " + clip);
        }
    }

    @Test
    void showListsQwen3VlsMergesSplitsAndDeepstackRenames() throws Exception {
        JsonNode d = show("dialect-qwen3vl", true).get("gguf_dialect");
        assertEquals(2, d.size(), "text and clip faces: " + d);
        assertTrue(d.get(0).get("translation").asText().startsWith("qwen3vl: "), d.toString());
        assertTrue(d.get(1).get("translation").asText().startsWith("qwen3vl (clip): "), d.toString());
        List<String> clip = new ArrayList<>();
        d.get(1).get("tensors").forEach(t -> clip.add(t.get("change").asText() + " " + t.get("from").asText() + " " + t.get("to").asText()));
        for (String c : new String[] {"computed v.blk.0.attn_q.weight v.blk.0.attn_qkv.weight", "computed v.patch_embed.weight v.patch_embd.weight.1",
                "renamed v.deepstack_merger.0.linear_fc1.weight v.deepstack.0.fc1.weight", "computed v.pos_embed.weight v.position_embd.weight"}) {
            assertTrue(clip.contains(c), c + " in " + clip);
        }
    }

    @Test
    void showSaysEmbeddingGemmaIsReadAsGemmaEmbedding() throws Exception {
        JsonNode d = show("dialect-embeddinggemma", true).get("gguf_dialect");
        assertEquals(1, d.size(), "no clip face: " + d);
        assertTrue(d.get(0).get("translation").asText().startsWith("embeddinggemma: "), d.toString());
        List<String> text = new ArrayList<>();
        d.get(0).get("tensors").forEach(t -> text.add(t.get("change").asText() + " " + t.get("from").asText() + " " + t.get("to").asText()));
        assertEquals(List.of("renamed dense.0.weight dense_2.weight", "renamed dense.1.weight dense_3.weight"), text);
    }

    @Test
    void showListsNemotronHMoesLatentRenamesAndTheMtpHeadLeftOut() throws Exception {
        JsonNode d = show("dialect-nemotron_h_moe", true).get("gguf_dialect");
        assertEquals(1, d.size(), "text only: " + d);
        assertTrue(d.get(0).get("translation").asText().startsWith("nemotron_h_moe: 1 metadata edits (+nemotron_h_moe.moe_latent_size)"), d.toString());
        List<String> text = new ArrayList<>();
        d.get(0).get("tensors").forEach(t -> text.add(t.get("change").asText() + " " + t.get("from").asText() + " " + t.get("to").asText()));
        for (String c : new String[] {"renamed blk.2.ffn_latent_in.weight blk.2.ffn_latent_down.weight",
                "renamed blk.2.ffn_latent_out.weight blk.2.ffn_latent_up.weight", "dropped mtp.layers.1.mixer.experts.3.up_proj.weight "}) {
            assertTrue(text.contains(c), c + " in " + text);
        }
    }

    static JsonNode show(String model, boolean tensors) throws Exception {
        return CliMount.showJson(out.resolve("store"), model, tensors);
    }
}
