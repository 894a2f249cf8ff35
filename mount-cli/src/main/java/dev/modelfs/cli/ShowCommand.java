package dev.modelfs.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.TensorTable;
import dev.modelfs.store.Layer;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.ManifestParser;
import dev.modelfs.store.ManifestRef;
import dev.modelfs.store.MediaType;
import dev.modelfs.store.ModelConfig;
import dev.modelfs.store.ModelName;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.view.BlobHeaders;
import java.io.IOException;
import java.util.Arrays;
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
        OllamaStore st = store.open();
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
        if (json) {
            System.out.println(JSON.writeValueAsString(out));
        } else {
            print(out);
        }
        return 0;
    }

    private ArrayNode tensorTable(OllamaStore st, Manifest m, ModelConfig cfg) throws IOException {
        ArrayNode arr = JSON.createArrayNode();
        BlobHeaders headers = new BlobHeaders(st);
        Layer model = m.first(MediaType.Kind.MODEL);
        if (model != null && model.digest().isPresent()) {
            GgufFile g = headers.gguf(model.digest().get(), model.size());
            for (GgufTensorInfo t : g.tensors()) {
                ObjectNode n = arr.addObject();
                n.put("name", t.name());
                n.put("type", t.type().name());
                n.put("shape", Arrays.toString(t.shape()));
            }
            return arr;
        }
        TensorTable table = dev.modelfs.view.SafetensorsModelView.tensorTable(new dev.modelfs.view.ModelContext(st, m, cfg, 0));
        for (LogicalTensor t : table.tensors()) {
            ObjectNode n = arr.addObject();
            n.put("name", t.name());
            n.put("type", t.quantized() ? t.quant().canonicalName() + " g" + t.quant().groupSize() : t.main().dtype().name());
            n.put("shape", Arrays.toString(t.logicalShape()));
        }
        for (String p : table.problems()) {
            arr.addObject().put("problem", p);
        }
        return arr;
    }

    private static void print(ObjectNode o) {
        System.out.printf("  %-14s %s%n", "name", o.get("name").asText());
        System.out.printf("  %-14s %s%n", "id", o.get("id").asText());
        System.out.printf("  %-14s %s%n", "format", o.get("format").asText());
        System.out.printf("  %-14s %s%n", "size", SizeConverter.human(o.get("size").asLong()));
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
    }
}
