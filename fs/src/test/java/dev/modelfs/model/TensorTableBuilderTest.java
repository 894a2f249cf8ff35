package dev.modelfs.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.format.safetensors.SafetensorsParser;
import dev.modelfs.quant.mlx.MlxMode;
import dev.modelfs.store.Digest;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.ManifestParser;
import dev.modelfs.store.ModelName;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** Every tensor blob kind of docs/FORMATS.md §4.3 on small in-memory blobs. */
class TensorTableBuilderTest {
    private final Map<Digest, byte[]> blobs = new HashMap<>();
    private final List<String> layers = new ArrayList<>();

    /** Tensor entry: key, dtype, shape; data bytes are zeros of the right length. */
    record E(String key, String dtype, long... shape) {
        long bytes() {
            long n = 1;
            for (long d : shape) {
                n *= d;
            }
            int bits = switch (dtype) {
                case "U8", "I8", "F8_E4M3" -> 8;
                case "BF16", "F16" -> 16;
                default -> 32;
            };
            return n * bits / 8;
        }
    }

    /** An MLX-writer style blob: unpadded, fields sorted, data in reverse key order, metadata object or null. */
    static byte[] mlxBlob(String metadataJson, E... entries) {
        StringBuilder h = new StringBuilder("{\"__metadata__\":").append(metadataJson);
        long off = 0;
        long total = 0;
        for (E e : entries) {
            total += e.bytes();
        }
        off = total;
        for (E e : entries) {
            off -= e.bytes();
            h.append(",\"").append(e.key()).append("\":{\"data_offsets\":[").append(off).append(',').append(off + e.bytes())
                    .append("],\"dtype\":\"").append(e.dtype()).append("\",\"shape\":").append(java.util.Arrays.toString(e.shape()).replace(" ", "")).append('}');
        }
        h.append('}');
        byte[] json = h.toString().getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(json.length).array());
        out.writeBytes(json);
        out.writeBytes(new byte[(int) total]);
        return out.toByteArray();
    }

    void layer(String name, byte[] blob) {
        Digest d = new Digest(String.format("%064x", blobs.size() + 1));
        blobs.put(d, blob);
        layers.add("{\"mediaType\":\"application/vnd.ollama.image.tensor\",\"digest\":\"" + d + "\",\"size\":" + blob.length
                + ",\"name\":\"" + name + "\"}");
    }

    void brokenLayer(String name) {
        Digest d = new Digest(String.format("%064x", 999));
        layers.add("{\"mediaType\":\"application/vnd.ollama.image.tensor\",\"digest\":\"" + d + "\",\"size\":10,\"name\":\"" + name + "\"}");
    }

    TensorTable build(Function<String, JsonNode> quant, String fileType) {
        return build(quant, fileType, null);
    }

    TensorTable build(Function<String, JsonNode> quant, String fileType, DraftLayout draft) {
        Manifest m = ManifestParser.parse(ModelName.parse("t").orElseThrow(),
                ("{\"layers\":[" + String.join(",", layers) + "]}").getBytes(StandardCharsets.UTF_8));
        HeaderSource hs = (d, size) -> {
            byte[] b = blobs.get(d);
            if (b == null) {
                throw new NoSuchFileException(d.fileName());
            }
            return SafetensorsParser.parse(MemorySegment.ofArray(b));
        };
        return new TensorTableBuilder(hs, quant, fileType, null, draft).build(m);
    }

    TensorTable build() {
        return build(c -> null, "");
    }

    TensorTable buildImage(String fileType, String imageQuantization) {
        Manifest m = ManifestParser.parse(ModelName.parse("t").orElseThrow(),
                ("{\"layers\":[" + String.join(",", layers) + "]}").getBytes(StandardCharsets.UTF_8));
        HeaderSource hs = (d, size) -> SafetensorsParser.parse(MemorySegment.ofArray(blobs.get(d)));
        return new TensorTableBuilder(hs, c -> null, fileType, imageQuantization, null).build(m);
    }

    /** A v0.14–v0.15 quantized tensor: three "data" layers (weight, _scale, _qbias when affine). */
    void legacyTriple(String name, long rows, long words, long groups, boolean affine) {
        layer(name, mlxBlob("null", new E("data", "U32", rows, words)));
        layer(name + "_scale", mlxBlob("null", new E("data", affine ? "BF16" : "U8", rows, groups)));
        if (affine) {
            layer(name + "_qbias", mlxBlob("null", new E("data", "BF16", rows, groups)));
        }
    }

    static void assertQuant(TensorTable t, String name, MlxMode mode, int bits, int group, long... logical) {
        LogicalTensor x = get(t, name);
        assertNotNull(x, name + " " + t.problems());
        assertEquals(mode, x.quant().mode(), name);
        assertEquals(bits, x.quant().bits(), name);
        assertEquals(group, x.quant().groupSize(), name);
        assertArrayEquals(logical, x.logicalShape(), name);
    }

    static LogicalTensor get(TensorTable t, String name) {
        return t.tensors().stream().filter(x -> x.name().equals(name)).findFirst().orElse(null);
    }

    @Test
    void kindsAandB_plainAndCombinedQuantized() {
        layer("model.norm.weight", mlxBlob("null", new E("model.norm.weight", "BF16", 64)));
        layer("q.weight", mlxBlob("{\"group_size\":\"64\",\"quant_type\":\"int4\"}",
                new E("q.weight", "U32", 8, 16), new E("q.weight.scale", "BF16", 8, 2), new E("q.weight.bias", "BF16", 8, 2)));
        layer("k.weight", mlxBlob("null", new E("k.weight", "U32", 8, 32), new E("k.weight.scale", "BF16", 8, 2), new E("k.weight.bias", "BF16", 8, 2)));
        layer("f.weight", mlxBlob("{\"quant_type\":\"mxfp4\"}", new E("f.weight", "U32", 4, 8), new E("f.weight.scale", "U8", 4, 2)));
        TensorTable t = build();
        assertTrue(t.problems().isEmpty(), t.problems().toString());
        assertNull(get(t, "model.norm.weight").quant());
        LogicalTensor q = get(t, "q.weight");
        assertEquals(MlxMode.AFFINE, q.quant().mode());
        assertEquals(4, q.quant().bits());
        assertEquals(64, q.quant().groupSize());
        assertArrayEquals(new long[] {8, 128}, q.logicalShape());
        LogicalTensor k = get(t, "k.weight");      // no metadata: shape inference gs8 == 64 -> int8/64
        assertEquals(8, k.quant().bits());
        assertEquals(64, k.quant().groupSize());
        assertArrayEquals(new long[] {8, 128}, k.logicalShape());
        LogicalTensor f = get(t, "f.weight");
        assertEquals(MlxMode.MXFP4, f.quant().mode());
        assertArrayEquals(new long[] {4, 64}, f.logicalShape());
        assertEquals(4, t.tensors().size(), "companions are not tensors of their own");
    }

    @Test
    void kindC_stackedExpertsWithMixedPerTensorMetadata() {
        layer("model.layers.1.mlp.experts", mlxBlob("{\"model.layers.1.mlp.experts.down_proj.weight.quant_type\":\"int8\","
                        + "\"model.layers.1.mlp.experts.down_proj.weight.group_size\":\"64\",\"quant_type\":\"int4\",\"group_size\":\"32\"}",
                new E("model.layers.1.mlp.experts.gate_proj.weight", "U32", 4, 16, 8),
                new E("model.layers.1.mlp.experts.gate_proj.weight.scale", "BF16", 4, 16, 2),
                new E("model.layers.1.mlp.experts.gate_proj.weight.bias", "BF16", 4, 16, 2),
                new E("model.layers.1.mlp.experts.down_proj.weight", "U32", 4, 64, 16),
                new E("model.layers.1.mlp.experts.down_proj.weight.scale", "BF16", 4, 64, 1),
                new E("model.layers.1.mlp.experts.down_proj.weight.bias", "BF16", 4, 64, 1)));
        TensorTable t = build();
        LogicalTensor gate = get(t, "model.layers.1.mlp.experts.gate_proj.weight");
        assertEquals(4, gate.quant().bits());
        assertEquals(32, gate.quant().groupSize());
        assertArrayEquals(new long[] {4, 16, 64}, gate.logicalShape());
        LogicalTensor down = get(t, "model.layers.1.mlp.experts.down_proj.weight");
        assertEquals(8, down.quant().bits());
        assertArrayEquals(new long[] {4, 64, 64}, down.logicalShape());
    }

    @Test
    void kindD_nvfp4WithGlobalScale_andRealBiasAndScaleTensorsAreNotCompanions() {
        layer("o.weight", mlxBlob("{\"quant_type\":\"nvfp4\"}", new E("o.weight", "U32", 2, 4), new E("o.weight.scale", "U8", 2, 2),
                new E("o.weight.global_scale", "F32")));
        layer("lin.bias", mlxBlob("null", new E("lin.bias", "F16", 8)));
        layer("lin.weight", mlxBlob("null", new E("lin.weight", "F16", 8, 8), new E("lin.weight.scale", "F16", 8)));
        layer("router.scale", mlxBlob("null", new E("router.scale", "BF16", 4), new E("router", "BF16", 4)));
        TensorTable t = build();
        LogicalTensor o = get(t, "o.weight");
        assertEquals(MlxMode.NVFP4, o.quant().mode());
        assertNotNull(o.globalScale());
        assertArrayEquals(new long[] {2, 32}, o.logicalShape());
        assertNotNull(get(t, "lin.bias"));
        assertNotNull(get(t, "lin.weight.scale"), "a .scale whose base is not U32 is an ordinary tensor");
        assertNull(get(t, "lin.weight").quant());
        assertNotNull(get(t, "router.scale"));
        assertNotNull(get(t, "router"));
    }

    @Test
    void kindE_legacyDataTriplesAndComponents() {
        layer("transformer/blocks.0.w", mlxBlob("null", new E("data", "U32", 8, 4)));
        layer("transformer/blocks.0.w_scale", mlxBlob("null", new E("data", "BF16", 8, 1)));
        layer("transformer/blocks.0.w_qbias", mlxBlob("null", new E("data", "BF16", 8, 1)));
        layer("transformer/blocks.0.m", mlxBlob("null", new E("data", "U32", 8, 16)));
        layer("transformer/blocks.0.m_scale", mlxBlob("null", new E("data", "U8", 8, 2)));
        layer("text_encoder/embed.weight", mlxBlob("null", new E("data", "BF16", 4, 4)));
        TensorTable t = build(c -> null, "q4");
        assertTrue(t.problems().isEmpty(), t.problems().toString());
        assertEquals(3, t.tensors().size());
        LogicalTensor w = get(t, "transformer/blocks.0.w");
        assertEquals("transformer", w.component());
        assertEquals("blocks.0.w", w.relativeName());
        assertEquals(4, w.quant().bits());
        assertEquals(32, w.quant().groupSize());
        assertArrayEquals(new long[] {8, 32}, w.logicalShape());
        LogicalTensor m = get(t, "transformer/blocks.0.m");
        assertEquals(MlxMode.MXFP8, m.quant().mode());
        assertEquals("text_encoder", get(t, "text_encoder/embed.weight").component());
        assertEquals(2, t.byComponent().size());
    }

    /** v0.14.0–v0.15.4 image import --quantize fp8: U32 [96,24] with a [96,3] scale is affine 8-bit g32, never int4 g64. */
    @Test
    void eraV014ImageFp8IsAffine8BitGroup32() {
        legacyTriple("transformer/blocks.0.attn.qkv.weight", 96, 24, 3, true);
        TensorTable t = buildImage("", "FP8");       // v0.14 image imports never set file_type
        assertTrue(t.problems().isEmpty(), t.problems().toString());
        assertQuant(t, "transformer/blocks.0.attn.qkv.weight", MlxMode.AFFINE, 8, 32, 96, 96);
    }

    /** The same shapes with no model_index.json at all: a "data" triple's tie is decided by the era (8-bit g32). */
    @Test
    void eraV014DataTripleWithoutAnyHintIsStill8BitGroup32() {
        legacyTriple("transformer/w", 96, 24, 3, true);
        assertQuant(buildImage("", null), "transformer/w", MlxMode.AFFINE, 8, 32, 96, 96);
    }

    /** v0.14.3–v0.15.4 fp4: affine 4-bit g32 (shape inference agrees; the era value must not break it). */
    @Test
    void eraV015ImageFp4IsAffine4BitGroup32() {
        legacyTriple("transformer/w", 96, 12, 3, true);
        assertQuant(buildImage("", "FP4"), "transformer/w", MlxMode.AFFINE, 4, 32, 96, 96);
    }

    /** v0.15.5–v0.15.6: q8 is affine 8-bit g64, mxfp8 g32 with U8 scales. */
    @Test
    void eraV0155ImageQ8AndMxfp8() {
        legacyTriple("transformer/a", 8, 32, 2, true);
        legacyTriple("text_encoder/b", 8, 16, 2, false);
        TensorTable t = buildImage("", "Q8");
        assertQuant(t, "transformer/a", MlxMode.AFFINE, 8, 64, 8, 128);
        assertQuant(t, "text_encoder/b", MlxMode.MXFP8, 8, 32, 8, 64);
    }

    /** v0.16+ image blobs carry metadata; model_index.json's "INT4" names no legacy type and the metadata wins. */
    @Test
    void eraV016ImageMetadataWins() {
        layer("transformer/a.weight", mlxBlob("{\"quant_type\":\"int4\",\"group_size\":\"64\"}",
                new E("transformer/a.weight", "U32", 96, 24), new E("transformer/a.weight.scale", "BF16", 96, 3),
                new E("transformer/a.weight.bias", "BF16", 96, 3)));
        assertQuant(buildImage("", "INT4"), "transformer/a.weight", MlxMode.AFFINE, 4, 64, 96, 192);
    }

    /** Names-keyed blobs without metadata (v0.18.0–v0.18.2 packed experts): the tie is int4 g64 unless file_type says 8 bits. */
    @Test
    void eraV018PackedExpertsTieFollowsFileTypeElseInt4Group64() {
        layer("model.layers.0.mlp.experts", mlxBlob("null", new E("model.layers.0.mlp.experts.0.up_proj.weight", "U32", 8, 8),
                new E("model.layers.0.mlp.experts.0.up_proj.weight.scale", "BF16", 8, 1),
                new E("model.layers.0.mlp.experts.0.up_proj.weight.bias", "BF16", 8, 1)));
        assertQuant(buildImage("", null), "model.layers.0.mlp.experts.0.up_proj.weight", MlxMode.AFFINE, 4, 64, 8, 64);
        assertQuant(buildImage("int8", null), "model.layers.0.mlp.experts.0.up_proj.weight", MlxMode.AFFINE, 8, 32, 8, 32);
    }

    @Test
    void kindF_componentPrefixedKeysAndBareKeys() {
        layer("transformer/a.weight", mlxBlob("{\"quant_type\":\"int8\",\"group_size\":\"64\"}",
                new E("transformer/a.weight", "U32", 2, 16), new E("transformer/a.weight.scale", "BF16", 2, 1), new E("transformer/a.weight.bias", "BF16", 2, 1)));
        layer("transformer/n.weight", mlxBlob("null", new E("n.weight", "BF16", 64)));
        TensorTable t = build();
        assertNotNull(get(t, "transformer/a.weight"));
        assertNotNull(get(t, "transformer/n.weight"));
        assertEquals(List.of("transformer"), List.copyOf(t.byComponent().keySet()));
    }

    @Test
    void kindG_legacyPackedExpertsWithoutMetadata() {
        layer("model.layers.1.mlp.experts", mlxBlob("null",
                new E("model.layers.1.mlp.experts.0.up_proj.weight", "U32", 8, 8), new E("model.layers.1.mlp.experts.0.up_proj.weight.scale", "BF16", 8, 2),
                new E("model.layers.1.mlp.experts.0.up_proj.weight.bias", "BF16", 8, 2),
                new E("model.layers.1.mlp.experts.1.up_proj.weight", "U32", 8, 8), new E("model.layers.1.mlp.experts.1.up_proj.weight.scale", "BF16", 8, 2),
                new E("model.layers.1.mlp.experts.1.up_proj.weight.bias", "BF16", 8, 2)));
        TensorTable t = build();
        assertEquals(2, t.tensors().size());
        assertEquals(32, get(t, "model.layers.1.mlp.experts.0.up_proj.weight").quant().groupSize());   // gs4 == 32
    }

    @Test
    void lowBitAffineFromConfigJson() throws IOException {
        layer("w3", mlxBlob("null", new E("w3", "U32", 2, 6), new E("w3.scale", "F16", 2, 1), new E("w3.bias", "F16", 2, 1)));
        JsonNode q = new ObjectMapper().readTree("{\"group_size\":64,\"bits\":3}");
        TensorTable t = build(c -> q, "");
        LogicalTensor w = get(t, "w3");
        assertEquals(3, w.quant().bits());
        assertArrayEquals(new long[] {2, 64}, w.logicalShape());
    }

    @Test
    void unreadableOrInconsistentBlobsDisableOnlyTheirComponent() {
        layer("transformer/ok.weight", mlxBlob("null", new E("ok.weight", "BF16", 4)));
        brokenLayer("vae/missing.weight");
        layer("text_encoder/bad.weight", mlxBlob("{\"quant_type\":\"int4\"}", new E("bad.weight", "U32", 2, 3), new E("bad.weight.scale", "BF16", 2, 5),
                new E("bad.weight.bias", "BF16", 2, 5)));
        layer("dotdot/evil.weight", mlxBlob("null", new E("../../evil.weight", "BF16", 4)));
        TensorTable t = build();
        assertEquals(java.util.Set.of("vae", "text_encoder", "dotdot"), t.disabledComponents());
        assertEquals(List.of("transformer"), List.copyOf(t.byComponent().keySet()));
        assertEquals(3, t.problems().size());
        assertFalse(t.problems().getFirst().isBlank());
    }

    @Test
    void mixedBlobWithPerTensorMetadataOnlyAndAnUnquantizedEntry() {
        // v0.21-v0.31 packed shared_experts group, MLX writer: types differ, so no blob-level keys,
        // per-tensor keys only for the quantized tensors (x/create/client/quantize.go quantizePackedGroup)
        String p = "model.layers.0.mlp.shared_experts.";
        layer("model.layers.0.mlp.shared_experts", mlxBlob("{\"" + p + "down_proj.weight.group_size\":\"32\",\"" + p
                        + "down_proj.weight.quant_type\":\"mxfp8\",\"" + p + "up_proj.weight.group_size\":\"16\",\"" + p
                        + "up_proj.weight.quant_type\":\"nvfp4\"}",
                new E(p + "up_proj.weight", "U32", 8, 8), new E(p + "up_proj.weight.scale", "U8", 8, 4),
                new E(p + "down_proj.weight", "U32", 4, 16), new E(p + "down_proj.weight.scale", "U8", 4, 2),
                new E(p + "gate_proj.weight", "BF16", 8, 48)));
        TensorTable t = build(c -> null, "nvfp4");
        assertTrue(t.problems().isEmpty(), t.problems().toString());
        assertEquals(MlxMode.NVFP4, get(t, p + "up_proj.weight").quant().mode());
        assertArrayEquals(new long[] {8, 64}, get(t, p + "up_proj.weight").logicalShape());
        assertEquals(MlxMode.MXFP8, get(t, p + "down_proj.weight").quant().mode());
        assertArrayEquals(new long[] {4, 64}, get(t, p + "down_proj.weight").logicalShape());
        assertNull(get(t, p + "gate_proj.weight").quant());
    }

    @Test
    void modelOptNvfp4SourceNamesAreFusedAcrossBlobsAndInOneBlob() {
        // pre-v0.22 pass-through: every ModelOpt tensor its own blob (Go writer, no metadata)
        layer("q.weight", mlxBlob("null", new E("q.weight", "U8", 8, 32)));
        layer("q.weight_scale", mlxBlob("null", new E("q.weight_scale", "F8_E4M3", 8, 4)));
        layer("q.weight_scale_2", mlxBlob("null", new E("q.weight_scale_2", "F32")));
        layer("q.input_scale", mlxBlob("null", new E("q.input_scale", "F32")));
        // a packed expert blob holding per-expert source names, without a global scale
        layer("e", mlxBlob("null", new E("e.0.weight", "U8", 4, 16), new E("e.0.weight_scale", "U8", 4, 2),
                new E("e.1.weight", "U8", 4, 16), new E("e.1.weight_scale", "F8_E4M3", 4, 3)));
        TensorTable t = build();
        assertTrue(t.problems().isEmpty(), t.problems().toString());
        LogicalTensor q = get(t, "q.weight");
        assertEquals(MlxMode.NVFP4, q.quant().mode());
        assertEquals(16, q.quant().groupSize());
        assertEquals(dev.modelfs.format.safetensors.Dtype.U32, q.main().dtype());
        assertArrayEquals(new long[] {8, 8}, q.main().shape());
        assertArrayEquals(new long[] {8, 64}, q.logicalShape());
        assertEquals(dev.modelfs.format.safetensors.Dtype.U8, q.scale().dtype());
        assertNotNull(q.globalScale());
        assertNull(get(t, "q.weight_scale"));
        assertNull(get(t, "q.weight_scale_2"));
        assertNull(get(t, "q.input_scale"), "the activation scale is dropped, as Ollama's importer does");
        LogicalTensor e0 = get(t, "e.0.weight");
        assertEquals(MlxMode.NVFP4, e0.quant().mode());
        assertNull(e0.globalScale());
        assertNull(get(t, "e.1.weight").quant(), "a scale of the wrong width is no block scale: both stay ordinary tensors");
        assertNotNull(get(t, "e.1.weight_scale"));
        assertEquals(4, t.tensors().size());
    }

    @Test
    void draftTensorsFormTheDraftComponentUnderTheirSourceNames() {
        layer("model.norm.weight", mlxBlob("null", new E("model.norm.weight", "BF16", 64)));
        layer("draft.model.norm.weight", mlxBlob("null", new E("draft.model.norm.weight", "BF16", 32)));
        layer("draft.q.weight", mlxBlob("{\"group_size\":\"64\",\"quant_type\":\"int8\"}",
                new E("draft.q.weight", "U32", 8, 16), new E("draft.q.weight.scale", "BF16", 8, 1), new E("draft.q.weight.bias", "BF16", 8, 1)));
        brokenLayer("draft.missing.weight");
        TensorTable t = build(c -> null, "", new DraftLayout("draft.", "draft"));
        LogicalTensor n = get(t, "draft/model.norm.weight");
        assertEquals("draft", n.component());
        assertEquals("model.norm.weight", n.relativeName());
        assertEquals(8, get(t, "draft/q.weight").quant().bits());
        assertEquals("", get(t, "model.norm.weight").component());
        assertEquals(java.util.Set.of("draft"), t.disabledComponents(), "a broken draft blob disables the draft folder only");
    }

    @Test
    void stackedNvfp4ExpertsWithOneGlobalScalePerExpert() {
        // v0.22-v0.31.1 compressed-tensors experts stacked as switch_mlp (Go writer): global scale [E, 1, 1]
        String w = "model.layers.0.mlp.switch_mlp.up_proj.weight";
        layer("model.layers.0.mlp.experts", mlxBlob("{\"group_size\":\"16\",\"quant_type\":\"nvfp4\"}",
                new E(w, "U32", 4, 8, 4), new E(w + ".scale", "U8", 4, 8, 2), new E(w + ".global_scale", "F32", 4, 1, 1),
                new E("x.weight", "U32", 4, 8, 4), new E("x.weight.scale", "U8", 4, 8, 2), new E("x.weight.global_scale", "F32", 2, 1, 1)));
        TensorTable t = build();
        LogicalTensor up = get(t, w);
        assertEquals(MlxMode.NVFP4, up.quant().mode());
        assertArrayEquals(new long[] {4, 1, 1}, up.globalScale().shape());
        assertNull(get(t, "x.weight").globalScale(), "a global scale that is not one per expert is no companion");
        assertNotNull(get(t, "x.weight.global_scale"));
    }
}
