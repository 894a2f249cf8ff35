package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The synthesized {@code model.gguf} of Ollama safetensors LLMs (issue 7) on a real mount of a store
 * made by {@code make_gguf_fixture.py}: tiny transformers models with trained tokenizers, imported
 * the way Ollama's importer writes them in BF16 and every MLX quantization, plus hostile variants.
 * Read by gguf-py (values against numpy oracles, names and metadata against llama.cpp's own
 * convert_hf_to_gguf.py) and run by llama.cpp (node-llama-cpp).
 */
class SynthesizedGgufTest {
    /** The generated fixture (set when the mount is made: {@link Fixture#generate}, cached by its generator's hash). */
    static Path out;

    @RegisterExtension
    static final MountedStore mounted = MountedStore.of("modelfs-gguf-it", work -> {
        String llamaSrc = System.getProperty("modelfs.llamaCppSrc", "node/node_modules/.llama.cpp-src");
        assertTrue(Files.isRegularFile(Path.of(llamaSrc, "convert_hf_to_gguf.py")),
                "llama.cpp's converter missing at " + llamaSrc + " (./test unpacks it)");
        return (out = Fixture.generate("gguf-fixture", "make_gguf_fixture.py", 1200, llamaSrc)).resolve("store");
    });

    @Test
    void ggufPyReadsEveryTensorAsTheOraclesAndMetadataAsLlamaCppsConverter() throws Exception {
        mounted.cli().requireChecker(900, "check_synth_gguf.py", out.toString());
    }

    /**
     * check_synth_gguf.py takes a fixture of any size (one model, no hostile ones: a subset made while working on one
     * architecture) and refuses only one that lists no model (it would check nothing and pass).
     */
    @Test
    void theCheckerTakesAOneModelFixtureAndRefusesAnEmptyOne() throws Exception {
        Path sub = Files.createTempDirectory("modelfs-gguf-subset-");
        try {
            for (String dir : new String[] {"ref", "oracle", "hf"}) {   // the paths in gguf_expected.json are relative to OUT
                if (Files.exists(out.resolve(dir))) {
                    Files.createSymbolicLink(sub.resolve(dir), out.resolve(dir));
                }
            }
            var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
            var all = (com.fasterxml.jackson.databind.node.ObjectNode) mapper.readTree(out.resolve("gguf_expected.json").toFile());
            var one = mapper.createObjectNode();
            one.set("synth-qwen3", all.get("models").get("synth-qwen3"));
            var exp = mapper.createObjectNode();
            exp.set("models", one);
            mapper.writeValue(sub.resolve("gguf_expected.json").toFile(), exp);
            mounted.cli().requireChecker(300, "check_synth_gguf.py", sub.toString());
            exp.set("models", mapper.createObjectNode());
            mapper.writeValue(sub.resolve("gguf_expected.json").toFile(), exp);
            Env.Run empty = Env.python(120, "check_synth_gguf.py", mounted.cli().mountpoint.toString(), sub.toString());
            assertTrue(empty.exit() != 0 && empty.output().contains("lists no model"), empty.output());
        } finally {
            try (var files = Files.list(sub)) {
                for (Path f : files.toList()) {
                    Files.delete(f);
                }
            }
            Files.delete(sub);
        }
    }

    @Test
    void everyFolderHoldsOneWeightSet() throws Exception {
        mounted.cli().requireChecker(300, "check_one_weight_set.py");
    }

    @Test
    void llamaCppLoadsTokenizesAndGeneratesLikeTheReference() throws Exception {
        Path node = Path.of(System.getProperty("modelfs.nodeDir", "node")).toAbsolutePath();
        assertTrue(Files.isDirectory(node.resolve("node_modules/node-llama-cpp")), "node-llama-cpp not installed in " + node);
        mounted.cli().requireChecker(1200, "check_synth_gguf.py", out.toString(), "--llama", node.toString());
    }

    @Test
    void showTellsTheChoicePerTensorAndWhyAModelHasNoGguf() throws Exception {
        JsonNode q = show("synth-qwen3:int4", true);
        JsonNode g = q.get("synthesized_gguf").get(0);
        assertEquals("model.gguf", g.get("file").asText());
        assertEquals("qwen3", g.get("architecture").asText());
        List<String> from = new ArrayList<>();
        g.get("tensors").forEach(t -> from.add(t.get("name").asText() + " " + t.get("type").asText() + " " + t.get("from").asText()));
        assertTrue(from.stream().anyMatch(s -> s.startsWith("blk.0.attn_q.weight Q4_1 ") && s.contains("lossless")), from.toString());
        assertTrue(from.stream().anyMatch(s -> s.startsWith("blk.0.attn_k.weight BF16 ") && s.contains("int8")), from.toString());
        JsonNode gemma = show("synth-gemma3n", false).get("synthesized_gguf").get(0);
        assertTrue(gemma.get("absent").asText().contains("Gemma 3n"), gemma.toString());
        assertEquals("gemma2", show("synth-gemma2", false).get("synthesized_gguf").get(0).get("architecture").asText());
        assertEquals("gemma4", show("synth-gemma4:int4", false).get("synthesized_gguf").get(0).get("architecture").asText());
        JsonNode qwen35 = show("synth-qwen35:int4", true).get("synthesized_gguf").get(0);
        assertEquals("qwen35", qwen35.get("architecture").asText());
        List<String> q35 = new ArrayList<>();
        qwen35.get("tensors").forEach(t -> q35.add(t.get("name").asText() + " " + t.get("type").asText() + " " + t.get("from").asText()));
        assertTrue(q35.stream().anyMatch(s -> s.startsWith("blk.0.ssm_a F32 ") && s.contains("-exp(x)")), q35.toString());
        assertTrue(q35.stream().anyMatch(s -> s.startsWith("blk.0.ssm_out.weight Q4_1 ") && s.contains("column blocks")), q35.toString());
        List<String> q36 = new ArrayList<>();   // the published Qwen3_5MoeForConditionalGeneration: the text model's fused experts
        JsonNode q36g = show("synth-qwen35moe_vlm:nvfp4", true).get("synthesized_gguf").get(0);
        assertEquals("qwen35moe", q36g.get("architecture").asText());
        q36g.get("tensors").forEach(t -> q36.add(t.get("name").asText() + " " + t.get("type").asText() + " " + t.get("from").asText()));
        assertTrue(q36.stream().anyMatch(s -> s.startsWith("blk.1.ffn_up_exps.weight NVFP4 model.language_model.layers.1.mlp.experts.gate_up_proj ")
                && s.contains("rows 32-63 of every 64")), q36.toString());
        assertTrue(q36.stream().noneMatch(s -> s.contains("visual")), q36.toString());
        List<String> moe = new ArrayList<>();   // Gemma 4's experts: stacked int4 gate_up_proj re-packed as the fused Q4_1 tensor
        show("synth-gemma4_moe:int4", true).get("synthesized_gguf").get(0).get("tensors").forEach(t -> moe.add(t.get("name").asText() + " "
                + t.get("type").asText() + " " + t.get("from").asText()));
        assertTrue(moe.stream().anyMatch(s -> s.startsWith("blk.1.ffn_gate_up_exps.weight Q4_1 model.layers.1.experts.gate_up_proj ")), moe.toString());
        JsonNode shapes = show("synth-bad-shapes", false).get("synthesized_gguf").get(0);
        assertTrue(shapes.get("absent").asText().contains("config.json implies"), shapes.toString());
        assertTrue(Files.isRegularFile(mounted.cli().mountpoint.resolve("synth-bad-shapes/model.safetensors")));
        assertFalse(Files.exists(mounted.cli().mountpoint.resolve("synth-bad-shapes/model.gguf")));
        assertFalse(Files.exists(mounted.cli().mountpoint.resolve("synth-bad-tokjson/model.gguf")));
        assertTrue(Files.isRegularFile(mounted.cli().mountpoint.resolve("synth-bad-tokjson/config.json")));
        long lines = mounted.cli().log().lines().filter(l -> l.contains("synth-bad-tokjson") && l.contains("model.gguf left out")).count();
        assertTrue(lines >= 1, "one log line per hostile model:\n" + mounted.cli().log());
    }

    @Test
    void aDraftIsAModelFolderWithItsOwnGgufOrTheReasonWhyNot() throws Exception {
        JsonNode files = show("synth-qwen3-draft", false).get("synthesized_gguf");
        List<String> seen = new ArrayList<>();
        files.forEach(f -> seen.add(f.get("file").asText() + " " + f.path("architecture").asText(f.path("absent").asText())));
        assertEquals(List.of("model.gguf qwen3", "draft/model.gguf llama"), seen);
        assertTrue(Files.isRegularFile(mounted.cli().mountpoint.resolve("synth-qwen3-draft/draft/model.gguf")));
        assertTrue(Files.isRegularFile(mounted.cli().mountpoint.resolve("synth-qwen3-draft:int4/bf16/draft/model.safetensors")));
        JsonNode refused = show("synth-dflash-draft", false).get("synthesized_gguf");
        assertEquals(2, refused.size(), refused.toString());
        assertEquals("draft/model.gguf", refused.get(1).get("file").asText());
        assertTrue(refused.get(1).get("absent").asText().contains("DFlashDraftModel"), refused.toString());
        assertTrue(Files.isRegularFile(mounted.cli().mountpoint.resolve("synth-dflash-draft/model.gguf")));
        assertTrue(Files.isRegularFile(mounted.cli().mountpoint.resolve("synth-dflash-draft/draft/model.safetensors")));
        assertFalse(Files.exists(mounted.cli().mountpoint.resolve("synth-dflash-draft/draft/model.gguf")));
        long lines = mounted.cli().log().lines().filter(l -> l.contains("synth-dflash-draft") && l.contains("draft/model.gguf left out")).count();
        assertTrue(lines >= 1, "one log line for the draft's GGUF:\n" + mounted.cli().log());
    }

    static JsonNode show(String model, boolean tensors) throws Exception {
        return CliMount.showJson(out.resolve("store"), model, tensors);
    }
}
