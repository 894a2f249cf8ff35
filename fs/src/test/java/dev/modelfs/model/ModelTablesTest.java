package dev.modelfs.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.Vectors;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.store.Digest;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.ManifestParser;
import dev.modelfs.store.ModelConfig;
import dev.modelfs.store.ModelName;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ModelTables#load} over a real store on disk: both formats, component configs, bad headers. */
class ModelTablesTest {
    @TempDir
    Path root;

    private final List<String> layers = new ArrayList<>();

    private Digest blob(byte[] bytes) throws IOException {
        Digest d;
        try {
            d = new Digest(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
        Files.createDirectories(root.resolve("blobs"));
        Files.write(root.resolve("blobs").resolve(d.fileName()), bytes);
        return d;
    }

    private void layer(String mediaType, String name, byte[] bytes, long manifestSize) throws IOException {
        Digest d = blob(bytes);
        layers.add("{\"mediaType\":\"application/vnd.ollama.image." + mediaType + "\",\"digest\":\"" + d + "\",\"size\":"
                + manifestSize + (name == null ? "" : ",\"name\":\"" + name + "\"") + "}");
    }

    private void layer(String mediaType, String name, byte[] bytes) throws IOException {
        layer(mediaType, name, bytes, bytes.length);
    }

    private void json(String name, String json) throws IOException {
        layer("json", name, json.getBytes(StandardCharsets.UTF_8));
    }

    private List<ModelTable> load() {
        return load(ModelConfig.EMPTY);
    }

    private List<ModelTable> load(ModelConfig config) {
        Manifest m = ManifestParser.parse(ModelName.parse("t").orElseThrow(),
                ("{\"layers\":[" + String.join(",", layers) + "]}").getBytes(StandardCharsets.UTF_8));
        return ModelTables.load(new OllamaStore(root), m, config);
    }

    @Test
    void ggufModelHasTheTensorInfosGgufPySees() throws IOException {
        layer("model", null, Vectors.bytes("tiny-llama.gguf"));
        List<ModelTable> tables = load();
        assertEquals(1, tables.size(), tables.toString());
        ModelTable.Gguf g = assertInstanceOf(ModelTable.Gguf.class, tables.getFirst());
        JsonNode expected = Vectors.json("tiny-llama.gguf.json").get("tensors");
        List<GgufTensorInfo> actual = g.file().tensors();
        assertEquals(expected.size(), actual.size());
        for (int i = 0; i < actual.size(); i++) {
            JsonNode e = expected.get(i);
            assertEquals(e.get("name").asText(), actual.get(i).name());
            assertEquals(e.get("type_name").asText(), actual.get(i).type().name());
            long[] ne = new long[e.get("ne").size()];
            Arrays.setAll(ne, k -> e.get("ne").get(k).asLong());
            assertEquals(Arrays.toString(ne), Arrays.toString(actual.get(i).ne()));
        }
        assertEquals(Vectors.json("tiny-llama.gguf.json").get("size").asLong(), g.layer().size());
    }

    @Test
    void unreadableGgufHeadersAreReportedNotThrown() throws IOException {
        layer("model", null, "not a gguf file at all, just text".getBytes(StandardCharsets.UTF_8));
        ModelTable.UnreadableGguf bad = assertInstanceOf(ModelTable.UnreadableGguf.class, load().getFirst());
        assertFalse(bad.reason().isBlank());

        layers.clear();
        byte[] gguf = Vectors.bytes("tiny-llama.gguf");
        layer("model", null, gguf, gguf.length + 1L); // the manifest promises another size
        assertInstanceOf(ModelTable.UnreadableGguf.class, load().getFirst());
    }

    /** An unpadded safetensors blob with one F32 tensor of {@code n} elements (zeros). */
    private static byte[] safetensors(String key, int n) {
        byte[] json = ("{\"" + key + "\":{\"dtype\":\"F32\",\"shape\":[" + n + "],\"data_offsets\":[0," + 4 * n + "]}}")
                .getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[8 + json.length + 4 * n];
        for (int i = 0; i < 8; i++) {
            out[i] = (byte) ((long) json.length >>> (8 * i));
        }
        System.arraycopy(json, 0, out, 8, json.length);
        return out;
    }

    @Test
    void safetensorsModelHasItsTensorTableAndComponentConfigs() throws IOException {
        layer("tensor", "norm.weight", safetensors("norm.weight", 2));
        layer("tensor", "vae/conv.weight", safetensors("conv.weight", 3));
        json("config.json", "{\"quantization\":{\"bits\":4,\"group_size\":64}}");
        json("vae/config.json", "{\"_class_name\":\"AutoencoderKL\",\"quantization_config\":{\"bits\":8}}");
        json("a/b/config.json", "{\"deep\":true}");
        json("text/config.json", "[1, 2]");
        List<ModelTable> tables = load();
        assertEquals(1, tables.size(), tables.toString());
        ModelTable.Safetensors s = assertInstanceOf(ModelTable.Safetensors.class, tables.getFirst());
        assertEquals(List.of("norm.weight", "vae/conv.weight"), s.table().tensors().stream().map(LogicalTensor::name).toList());
        assertEquals("[3]", Arrays.toString(s.table().tensors().get(1).logicalShape()));
        assertTrue(s.table().problems().isEmpty(), s.table().problems().toString());

        ComponentConfigs c = s.configs();
        assertEquals("AutoencoderKL", c.get("vae").get("_class_name").asText());
        assertNull(c.get("a"), "only config.json one level deep");
        assertNull(c.get("text"), "not a JSON object");
        assertEquals(8, c.quantSection("vae").get("bits").asInt(), "own quantization_config");
        assertEquals(4, c.quantSection("text").get("bits").asInt(), "the root's quantization");
    }

    @Test
    void aMissingTensorBlobDisablesOnlyItsComponent() throws IOException {
        layer("tensor", "norm.weight", safetensors("norm.weight", 2));
        layers.add("{\"mediaType\":\"application/vnd.ollama.image.tensor\",\"digest\":\"sha256:" + "ab".repeat(32)
                + "\",\"size\":100,\"name\":\"vae/conv.weight\"}");
        ModelTable.Safetensors s = assertInstanceOf(ModelTable.Safetensors.class, load().getFirst());
        assertEquals(java.util.Set.of("vae"), s.table().disabledComponents());
        assertEquals(1, s.table().problems().size());
        assertEquals(List.of("norm.weight"), s.table().byComponent().get("").stream().map(LogicalTensor::name).toList());
    }

    @Test
    void modelsWithoutTensorLayersHaveNoTables() throws IOException {
        layer("template", null, "{{ .Prompt }}".getBytes(StandardCharsets.UTF_8));
        assertTrue(load().isEmpty());
    }

    @Test
    void aGgufDraftLayerIsTheDraftFolderAfterTheModel() throws IOException {
        byte[] gguf = Vectors.bytes("tiny-llama.gguf");
        layer("draft", null, gguf);
        layer("model", null, gguf);
        List<ModelTable> tables = load();
        assertEquals(2, tables.size(), tables.toString());
        assertEquals("", assertInstanceOf(ModelTable.Gguf.class, tables.get(0)).folder());
        assertEquals("draft", assertInstanceOf(ModelTable.Gguf.class, tables.get(1)).folder());

        layers.clear();
        layer("draft", null, "not a gguf".getBytes(StandardCharsets.UTF_8));
        assertEquals("draft", assertInstanceOf(ModelTable.UnreadableGguf.class, load().getFirst()).folder());
    }

    @Test
    void safetensorsDraftTensorsAreTheDraftComponent() throws IOException {
        layer("tensor", "norm.weight", safetensors("norm.weight", 2));
        layer("tensor", "draft.norm.weight", safetensors("draft.norm.weight", 3));
        json("draft/config.json", "{\"architectures\":[\"LlamaForCausalLM\"],\"quantization\":{\"bits\":8}}");
        ModelTable.Safetensors s = assertInstanceOf(ModelTable.Safetensors.class,
                load(ModelConfig.parse("{\"draft\":{\"model_format\":\"safetensors\",\"tensor_prefix\":\"draft.\",\"config\":\"draft/config.json\"}}"
                        .getBytes(StandardCharsets.UTF_8))).getFirst());
        assertEquals(List.of("norm.weight", "draft/norm.weight"), s.table().tensors().stream().map(LogicalTensor::name).toList());
        assertEquals(List.of("", "draft"), List.copyOf(s.table().byComponent().keySet()));
        assertEquals(8, s.configs().quantSection("draft").get("bits").asInt(), "the draft's own config.json");
        // without the config blob's draft object, a draft/config.json layer alone marks the draft (Ollama's fallback)
        s = assertInstanceOf(ModelTable.Safetensors.class, load().getFirst());
        assertEquals("draft", s.table().tensors().get(1).component());
    }
}
