package dev.modelfs.cli;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.format.gguf.GgufWriter;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.format.safetensors.SafetensorsWriter;
import dev.modelfs.quant.FloatCasts;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Writes a small sample Ollama store: a GGUF model (F32, F16, Q8_0 tensors, template, params,
 * license), a safetensors LLM with an int4-quantized weight, and a diffusers-style image model with
 * components. Deterministic (fixed seed), a few hundred KB.
 */
final class DemoStore {
    private final Path root;
    private final Random rnd = new Random(7);

    DemoStore(Path root) {
        this.root = root;
    }

    void write() throws IOException {
        Files.createDirectories(root.resolve("blobs"));
        ggufModel();
        safetensorsModel();
        imageModel();
    }

    private record LayerRef(String mediaType, String digest, long size, String name) {
        String json() {
            return "{\"mediaType\":\"" + mediaType + "\",\"digest\":\"sha256:" + digest + "\",\"size\":" + size
                    + (name == null ? "" : ",\"name\":\"" + name + "\"") + "}";
        }
    }

    private LayerRef blob(String mediaType, byte[] bytes, String name) throws IOException {
        String hex;
        try {
            hex = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        Files.write(root.resolve("blobs/sha256-" + hex), bytes);
        return new LayerRef(mediaType, hex, bytes.length, name);
    }

    private void manifest(String path, String config, List<LayerRef> layers) throws IOException {
        LayerRef cfg = blob("application/vnd.docker.container.image.v1+json", config.getBytes(StandardCharsets.UTF_8), null);
        StringBuilder sb = new StringBuilder("{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\",\"config\":")
                .append(cfg.json()).append(",\"layers\":[");
        for (int i = 0; i < layers.size(); i++) {
            sb.append(i == 0 ? "" : ",").append(layers.get(i).json());
        }
        sb.append("]}\n");
        Path p = root.resolve("manifests").resolve(path);
        Files.createDirectories(p.getParent());
        Files.writeString(p, sb);
    }

    private float[] randn(int n) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) {
            f[i] = (float) (rnd.nextGaussian() * 0.05);
        }
        return f;
    }

    private static byte[] le(int bytes) {
        return new byte[bytes];
    }

    private static byte[] f32(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) {
            b.putFloat(x);
        }
        return b.array();
    }

    private static byte[] f16(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 2).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) {
            b.putShort(Float.floatToFloat16(x));
        }
        return b.array();
    }

    private static byte[] bf16(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 2).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) {
            b.putShort(FloatCasts.f32ToBf16(x));
        }
        return b.array();
    }

    /** ggml's Q8_0: per 32 values d = amax/127 (f16), q = round(x/d). */
    private static byte[] q8_0(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length / 32 * 34).order(ByteOrder.LITTLE_ENDIAN);
        for (int blk = 0; blk < v.length / 32; blk++) {
            float amax = 0;
            for (int i = 0; i < 32; i++) {
                amax = Math.max(amax, Math.abs(v[blk * 32 + i]));
            }
            float d = amax / 127;
            float id = d == 0 ? 0 : 1 / d;
            b.putShort(Float.floatToFloat16(d));
            for (int i = 0; i < 32; i++) {
                b.put((byte) Math.round(v[blk * 32 + i] * id));
            }
        }
        return b.array();
    }

    private void ggufModel() throws IOException {
        int embd = 64, vocab = 32;
        String[] tokens = new String[vocab];
        for (int i = 0; i < vocab; i++) {
            tokens[i] = "<t" + i + ">";
        }
        List<byte[]> kvs = List.of(
                GgufWriter.encodeKv("general.architecture", GgufValueType.STRING, "llama"),
                GgufWriter.encodeKv("general.name", GgufValueType.STRING, "demo-llama"),
                GgufWriter.encodeKv("general.file_type", GgufValueType.UINT32, 7),
                GgufWriter.encodeKv("llama.embedding_length", GgufValueType.UINT32, embd),
                GgufWriter.encodeKv("llama.block_count", GgufValueType.UINT32, 1),
                GgufWriter.encodeKv("tokenizer.ggml.model", GgufValueType.STRING, "gpt2"),
                GgufWriter.encodeKv("tokenizer.ggml.tokens", GgufValueType.ARRAY,
                        new dev.modelfs.format.gguf.GgufArray(GgufValueType.STRING, List.<Object>of((Object[]) tokens))));
        record T(String name, long[] ne, GgmlType type, byte[] data) {}
        List<T> ts = List.of(
                new T("token_embd.weight", new long[] {embd, vocab}, GgmlType.F16, f16(randn(embd * vocab))),
                new T("output_norm.weight", new long[] {embd}, GgmlType.F32, f32(randn(embd))),
                new T("blk.0.attn_q.weight", new long[] {embd, embd}, GgmlType.Q8_0, q8_0(randn(embd * embd))));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(GgufWriter.preamble(3, ts.size(), kvs.size()));
        kvs.forEach(out::writeBytes);
        long[] offsets = GgufWriter.tensorOffsets(ts.stream().map(t -> (long) t.data().length).toList(), 32);
        for (int i = 0; i < ts.size(); i++) {
            out.writeBytes(GgufWriter.encodeTensorInfo(ts.get(i).name(), ts.get(i).ne(), ts.get(i).type(), offsets[i]));
        }
        out.writeBytes(le((int) (GgufWriter.align(out.size(), 32) - out.size())));
        int start = out.size();
        for (int i = 0; i < ts.size(); i++) {
            out.writeBytes(le((int) (start + offsets[i] - out.size())));
            out.writeBytes(ts.get(i).data());
        }
        List<LayerRef> layers = new ArrayList<>();
        layers.add(blob("application/vnd.ollama.image.model", out.toByteArray(), null));
        layers.add(blob("application/vnd.ollama.image.template", "{{ .System }}\n{{ .Prompt }}".getBytes(StandardCharsets.UTF_8), null));
        layers.add(blob("application/vnd.ollama.image.params", "{\"stop\":[\"\\u003c|end|\\u003e\"],\"temperature\":0.6}\n".getBytes(StandardCharsets.UTF_8), null));
        layers.add(blob("application/vnd.ollama.image.license", "Demo license: do what you like.".getBytes(StandardCharsets.UTF_8), null));
        manifest("registry.ollama.ai/library/demo-llama/latest",
                "{\"model_format\":\"gguf\",\"model_family\":\"llama\",\"model_families\":[\"llama\"],\"model_type\":\"7K\",\"file_type\":\"Q8_0\",\"architecture\":\"amd64\",\"os\":\"linux\"}\n",
                layers);
    }

    private byte[] safetensors(Map<String, Object[]> tensors, Map<String, String> metadata) {
        List<SafetensorsWriter.Spec> specs = new ArrayList<>();
        tensors.forEach((k, v) -> specs.add(new SafetensorsWriter.Spec(k, (Dtype) v[0], (long[]) v[1])));
        SafetensorsWriter.Layout layout = SafetensorsWriter.layout(specs, metadata);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(layout.header());
        for (SafetensorsWriter.Placed p : layout.tensors()) {
            out.writeBytes((byte[]) tensors.get(p.spec().name())[2]);
        }
        return out.toByteArray();
    }

    private Map<String, Object[]> one(String name, Dtype dtype, long[] shape, byte[] data) {
        Map<String, Object[]> m = new LinkedHashMap<>();
        m.put(name, new Object[] {dtype, shape, data});
        return m;
    }

    /** MLX affine int4, group 64: random codes, bf16 scale and bias. */
    private byte[] int4Blob(String name, int rows, int cols) {
        byte[] codes = new byte[rows * cols / 2];
        rnd.nextBytes(codes);
        float[] scale = new float[rows * cols / 64];
        float[] bias = new float[rows * cols / 64];
        for (int i = 0; i < scale.length; i++) {
            scale[i] = 0.001f + rnd.nextFloat() * 0.01f;
            bias[i] = -8 * scale[i];
        }
        Map<String, Object[]> m = one(name, Dtype.U32, new long[] {rows, cols / 8}, codes);
        m.put(name + ".scale", new Object[] {Dtype.BF16, new long[] {rows, cols / 64}, bf16(scale)});
        m.put(name + ".bias", new Object[] {Dtype.BF16, new long[] {rows, cols / 64}, bf16(bias)});
        return safetensors(m, Map.of("quant_type", "int4", "group_size", "64"));
    }

    private void safetensorsModel() throws IOException {
        List<LayerRef> layers = new ArrayList<>();
        layers.add(blob("application/vnd.ollama.image.tensor",
                safetensors(one("model.embed_tokens.weight", Dtype.BF16, new long[] {32, 64}, bf16(randn(32 * 64))), null), "model.embed_tokens.weight"));
        layers.add(blob("application/vnd.ollama.image.tensor",
                safetensors(one("model.norm.weight", Dtype.F32, new long[] {64}, f32(randn(64))), null), "model.norm.weight"));
        layers.add(blob("application/vnd.ollama.image.tensor", int4Blob("model.layers.0.mlp.up_proj.weight", 128, 64),
                "model.layers.0.mlp.up_proj.weight"));
        layers.add(blob("application/vnd.ollama.image.json",
                "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":64}".getBytes(StandardCharsets.UTF_8), "config.json"));
        manifest("registry.ollama.ai/library/demo-st/int4",
                "{\"model_format\":\"safetensors\",\"model_family\":\"\",\"model_families\":null,\"model_type\":\"\",\"file_type\":\"int4\",\"capabilities\":[\"completion\"],\"architecture\":\"\",\"os\":\"\"}",
                layers);
    }

    private void imageModel() throws IOException {
        List<LayerRef> layers = new ArrayList<>();
        layers.add(blob("application/vnd.ollama.image.tensor", int4Blob("transformer/blocks.0.attn.qkv.weight", 64, 128),
                "transformer/blocks.0.attn.qkv.weight"));
        layers.add(blob("application/vnd.ollama.image.tensor",
                safetensors(one("blocks.0.norm.weight", Dtype.BF16, new long[] {128}, bf16(randn(128))), null), "transformer/blocks.0.norm.weight"));
        layers.add(blob("application/vnd.ollama.image.tensor",
                safetensors(one("encoder.conv_in.weight", Dtype.F16, new long[] {8, 4}, f16(randn(32))), null), "vae/encoder.conv_in.weight"));
        layers.add(blob("application/vnd.ollama.image.json",
                "{\"_class_name\":\"DemoTransformer2DModel\",\"num_layers\":1}".getBytes(StandardCharsets.UTF_8), "transformer/config.json"));
        layers.add(blob("application/vnd.ollama.image.json",
                "{\"_class_name\":\"AutoencoderKL\"}".getBytes(StandardCharsets.UTF_8), "vae/config.json"));
        layers.add(blob("application/vnd.ollama.image.json",
                "{\n    \"architecture\": \"DemoPipeline\"\n}".getBytes(StandardCharsets.UTF_8), "model_index.json"));
        manifest("registry.ollama.ai/x/demo-image/latest",
                "{\"model_format\":\"safetensors\",\"model_family\":\"\",\"model_families\":null,\"model_type\":\"\",\"file_type\":\"int4\",\"requires\":\"0.14.0\",\"capabilities\":[\"image\"],\"architecture\":\"\",\"os\":\"\"}",
                layers);
    }
}
