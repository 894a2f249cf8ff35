package dev.modelfs.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.dialect.Outcome;
import dev.modelfs.dialect.TensorChange;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.hf.HfFolder;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.ModelTable;
import dev.modelfs.model.ModelTables;
import dev.modelfs.model.TensorTable;
import dev.modelfs.serve.ModelPlans;
import dev.modelfs.store.Layer;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.ManifestParser;
import dev.modelfs.store.ManifestRef;
import dev.modelfs.store.ModelConfig;
import dev.modelfs.store.ModelName;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.synth.SynthesizedGgufPlanner;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code modelfs show}: config, layers and (with --tensors) the tensor table of one model, without mounting. */
@Command(name = "show", mixinStandardHelpOptions = true, description = "Describe one model: config, layers, tensors.")
final class ShowCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @Mixin
    StoreOption store;

    @Parameters(paramLabel = "MODEL", description = "model name as `ollama list` shows it (e.g. llama3.2:1b)")
    String model;

    @Option(names = "--tensors", description = "include the tensor table (logical shapes and quantization)")
    boolean tensors;

    @Option(names = "--json", description = "machine-readable output")
    boolean json;

    @Override
    public Integer call() throws IOException {
        OllamaStore st = store.openExisting();
        ModelName want = ModelName.parse(model).orElseThrow(() -> new IllegalArgumentException("not a valid model name: " + model));
        ManifestRef ref = st.listManifests().stream().filter(r -> r.name().equalsIgnoreCase(want)).findFirst()
                .orElseThrow(() -> new IOException("model " + model + " not found in " + st.root()));
        Manifest m = ManifestParser.parse(ref.name(), st.readManifest(ref));
        ModelConfig cfg = ModelSummary.config(st, m);
        ObjectNode out = JSON.createObjectNode();
        out.put("name", m.name().displayShortest());
        out.put("id", m.digest().shortId());
        out.put("digest", m.digest().toString());
        out.put("format", ModelSummary.format(m, cfg));
        out.put("size", m.totalSize());
        hfFolder(st, m, cfg).ifPresent(v -> out.put("hf_folder", v));
        chatTemplate(st, m, cfg).ifPresent(v -> out.put("chat_template", v));
        ArrayNode dialect = dialect(st, m, cfg, tensors);
        if (!dialect.isEmpty()) {
            out.set("gguf_dialect", dialect);
        }
        out.set("config", cfg.json().isMissingNode() ? JSON.createObjectNode() : cfg.json());
        ArrayNode layers = out.putArray("layers");
        for (Layer l : m.layers()) {
            ObjectNode n = layers.addObject();
            n.put("mediaType", l.mediaType().base());
            n.put("digest", l.digest().map(Object::toString).orElse(""));
            n.put("size", l.size());
            if (l.name() != null) {
                n.put("name", l.name());
            }
        }
        if (tensors) {
            out.set("tensors", tensorTable(st, m, cfg));
        }
        ArrayNode gguf = synthesizedGguf(st, m, cfg, tensors);
        if (!gguf.isEmpty()) {
            out.set("synthesized_gguf", gguf);
        }
        if (json) {
            System.out.println(JSON.writeValueAsString(out));
        } else {
            print(out);
        }
        return 0;
    }

    /**
     * For a GGUF model: the Hugging Face architecture its folder shows (docs/SEMANTICS.md "Hugging Face
     * folder of GGUF models"), or {@code "none: <reason>"}; empty for other models.
     */
    private static java.util.Optional<String> hfFolder(OllamaStore st, Manifest m, ModelConfig cfg) {
        for (ModelTable t : ModelTables.load(st, m, cfg)) {
            if (t instanceof ModelTable.Gguf g && g.folder().isEmpty()) {
                try {
                    HfFolder hf = ModelPlans.hfFolder(st, m, g);
                    return java.util.Optional.of(hf.hfArchitecture()
                            + (hf.tokenizerProblem() == null ? "" : " (no tokenizer files: " + hf.tokenizerProblem() + ")"));
                } catch (RuntimeException e) {
                    return java.util.Optional.of("none: " + e.getMessage());
                }
            }
            if (t instanceof ModelTable.UnreadableGguf u && u.folder().isEmpty()) {
                return java.util.Optional.of("none: " + u.reason());
            }
        }
        return java.util.Optional.empty();
    }

    /**
     * For a GGUF model with a Hugging Face tokenizer: where {@code tokenizer_config.json}'s
     * {@code chat_template} comes from, or {@code "none: <reason>"} (docs/SEMANTICS.md "Chat template").
     */
    private static java.util.Optional<String> chatTemplate(OllamaStore st, Manifest m, ModelConfig cfg) {
        for (ModelTable t : ModelTables.load(st, m, cfg)) {
            if (t instanceof ModelTable.Gguf g && g.folder().isEmpty()) {
                try {
                    HfFolder hf = ModelPlans.hfFolder(st, m, g);
                    return hf.tokenizerConfig() == null ? java.util.Optional.empty() : java.util.Optional.of(hf.chatTemplate().describe());
                } catch (RuntimeException e) {
                    return java.util.Optional.empty();
                }
            }
        }
        return java.util.Optional.empty();
    }

    /**
     * For a GGUF model: which translation of Ollama's GGUF dialect {@code model.gguf} and {@code mmproj.gguf} got
     * (docs/SEMANTICS.md "Ollama's GGUF dialect"), and with {@code perTensor} the renamed, dropped and computed tensors.
     */
    private static ArrayNode dialect(OllamaStore st, Manifest m, ModelConfig cfg, boolean perTensor) {
        ArrayNode arr = JSON.createArrayNode();
        for (ModelTable t : ModelTables.load(st, m, cfg)) {
            if (t instanceof ModelTable.Gguf g && g.folder().isEmpty()) {
                List<Outcome> faces = ModelPlans.dialect(g);
                String[] files = {"model.gguf", "mmproj.gguf"};
                for (int i = 0; i < faces.size(); i++) {
                    if (i > 0 && faces.get(i) instanceof Outcome.Untouched) {
                        continue;
                    }
                    ObjectNode n = arr.addObject();
                    n.put("file", files[i]);
                    n.put("translation", faces.get(i).describe());
                    if (perTensor && faces.get(i) instanceof Outcome.Translated tr) {
                        ArrayNode ts = n.putArray("tensors");
                        for (TensorChange c : tr.translation().changes()) {
                            ts.addObject().put("change", c.kind().name().toLowerCase()).put("from", c.from()).put("to", c.to())
                                    .put("detail", c.detail());
                        }
                    }
                }
            }
        }
        return arr;
    }

    /** The model stage's tables: the GGUF model's tensor infos if it has one, else the safetensors tensor table. */
    private ArrayNode tensorTable(OllamaStore st, Manifest m, ModelConfig cfg) throws IOException {
        ArrayNode arr = JSON.createArrayNode();
        List<ModelTable> tables = ModelTables.load(st, m, cfg);
        for (ModelTable t : tables) {
            if (t instanceof ModelTable.UnreadableGguf u && u.folder().isEmpty()) {
                throw new IOException(u.reason());
            }
            if (t instanceof ModelTable.Gguf g && g.folder().isEmpty()) {
                for (GgufTensorInfo info : g.file().tensors()) {
                    ObjectNode n = arr.addObject();
                    n.put("name", info.name());
                    n.put("type", info.type().name());
                    n.put("shape", Arrays.toString(info.shape()));
                }
                return arr;
            }
        }
        for (ModelTable t : tables) {
            if (t instanceof ModelTable.Safetensors s) {
                TensorTable table = s.table();
                for (LogicalTensor lt : table.tensors()) {
                    ObjectNode n = arr.addObject();
                    n.put("name", lt.name());
                    n.put("type", lt.quantized() ? lt.quant().canonicalName() + " g" + lt.quant().groupSize() : lt.main().dtype().name());
                    n.put("shape", Arrays.toString(lt.logicalShape()));
                }
                for (String p : table.problems()) {
                    arr.addObject().put("problem", p);
                }
            }
        }
        return arr;
    }

    /** The synthesized model.gguf of each LLM component: planned (with per-tensor choices) or why not. */
    private static ArrayNode synthesizedGguf(OllamaStore st, Manifest m, ModelConfig cfg, boolean perTensor) {
        ArrayNode arr = JSON.createArrayNode();
        for (ModelTable t : ModelTables.load(st, m, cfg)) {
            if (t instanceof ModelTable.Safetensors s) {
                for (SynthesizedGgufPlanner.Result r : ModelPlans.synthesizedGguf(st, m, s)) {
                    ObjectNode n = arr.addObject();
                    n.put("file", (r.component().isEmpty() ? "" : r.component() + "/") + "model.gguf");
                    switch (r) {
                        case SynthesizedGgufPlanner.Result.Refused f -> n.put("absent", f.reason());
                        case SynthesizedGgufPlanner.Result.Planned p -> {
                            n.put("architecture", p.plan().architecture().ggufName());
                            if (perTensor) {
                                ArrayNode ts = n.putArray("tensors");
                                for (SynthesizedGgufPlanner.TensorPlan tp : p.plan().tensors()) {
                                    ts.addObject().put("name", tp.ggufName()).put("type", tp.type().name())
                                            .put("ne", Arrays.toString(tp.ne())).put("from", tp.describe());
                                }
                            }
                        }
                    }
                }
            }
        }
        return arr;
    }

    private static void print(ObjectNode o) {
        System.out.printf("  %-14s %s%n", "name", o.get("name").asText());
        System.out.printf("  %-14s %s%n", "id", o.get("id").asText());
        System.out.printf("  %-14s %s%n", "format", o.get("format").asText());
        System.out.printf("  %-14s %s%n", "size", SizeConverter.human(o.get("size").asLong()));
        if (o.has("hf_folder")) {
            System.out.printf("  %-14s %s%n", "hf_folder", o.get("hf_folder").asText());
        }
        if (o.has("chat_template")) {
            System.out.printf("  %-14s %s%n", "chat_template", o.get("chat_template").asText());
        }
        o.get("config").fields().forEachRemaining(e -> {
            if (!e.getValue().isNull() && !e.getValue().asText().isEmpty() || e.getValue().isContainerNode()) {
                System.out.printf("  %-14s %s%n", e.getKey(), e.getValue().isTextual() ? e.getValue().asText() : e.getValue().toString());
            }
        });
        System.out.println();
        System.out.println("  layers");
        for (var l : o.get("layers")) {
            System.out.printf("    %-42s %-20s %10s  %s%n", l.get("mediaType").asText(), l.get("digest").asText().replace("sha256:", "").substring(0, Math.min(12,
                    l.get("digest").asText().replace("sha256:", "").length())), SizeConverter.human(l.get("size").asLong()),
                    l.has("name") ? l.get("name").asText() : "");
        }
        for (var d : o.path("gguf_dialect")) {
            System.out.printf("  %-14s %s%n", d.get("file").asText(), "Ollama dialect: " + d.get("translation").asText());
            for (var t : d.path("tensors")) {
                System.out.printf("    %-9s %-48s %s%n", t.get("change").asText(), t.get("from").asText(),
                        t.get("to").asText().isEmpty() ? t.get("detail").asText() : "-> " + t.get("to").asText() + " (" + t.get("detail").asText() + ")");
            }
        }
        if (o.has("tensors")) {
            System.out.println();
            System.out.println("  tensors");
            for (var t : o.get("tensors")) {
                if (t.has("problem")) {
                    System.out.println("    ! " + t.get("problem").asText());
                } else {
                    System.out.printf("    %-56s %-14s %s%n", t.get("name").asText(), t.get("type").asText(), t.get("shape").asText());
                }
            }
        }
        if (o.has("synthesized_gguf")) {
            for (var g : o.get("synthesized_gguf")) {
                System.out.println();
                System.out.println("  " + g.get("file").asText() + (g.has("absent") ? ": not synthesized: " + g.get("absent").asText()
                        : " (synthesized, " + g.get("architecture").asText() + ")"));
                for (var t : g.path("tensors")) {
                    System.out.printf("    %-40s %-6s %s%n", t.get("name").asText(), t.get("type").asText(), t.get("from").asText());
                }
            }
        }
    }
}
