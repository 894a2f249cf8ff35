package dev.modelfs.cli;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.format.gguf.GgufWriter;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.format.safetensors.SafetensorsWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
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

/**
 * Writes a small sample Ollama store: {@code demo-llama}, a GGUF llama (F32, F16, Q8_0, Q4_0, Q4_K
 * tensors, template, params, license); {@code demo-st:int4}, a safetensors llama imported from MLX int4
 * with its config and tokenizer files; {@code x/demo-image}, a diffusers-style image model with components.
 * Both LLMs are complete one-layer models with a real (tiny) byte-level BPE vocabulary, so that every view
 * of them exists: the Hugging Face folder of the GGUF model, the synthesized GGUF of the safetensors one.
 * Deterministic (fixed seed), about 170 KB of blobs.
 */
final class DemoStore {
    private final Path root;
    private final DemoWeights w = new DemoWeights(7);
    private final DemoVocab vocab = new DemoVocab();

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

    /** The demo GGUF model: a complete one-layer llama (tied embeddings), tensors in F16, F32, Q8_0, Q4_0, Q4_K. */
    private void ggufModel() throws IOException {
        int embd = 64, heads = 4, headsKv = 2, headDim = embd / heads, ff = 256, ctx = 2048;
        int nVocab = vocab.size();
        List<byte[]> kvs = new ArrayList<>(List.of(
                GgufWriter.encodeKv("general.architecture", GgufValueType.STRING, "llama"),
                GgufWriter.encodeKv("general.type", GgufValueType.STRING, "model"),
                GgufWriter.encodeKv("general.name", GgufValueType.STRING, "demo-llama"),
                GgufWriter.encodeKv("general.file_type", GgufValueType.UINT32, 7),
                GgufWriter.encodeKv("general.quantization_version", GgufValueType.UINT32, 2),
                GgufWriter.encodeKv("llama.vocab_size", GgufValueType.UINT32, nVocab),
                GgufWriter.encodeKv("llama.context_length", GgufValueType.UINT32, ctx),
                GgufWriter.encodeKv("llama.embedding_length", GgufValueType.UINT32, embd),
                GgufWriter.encodeKv("llama.block_count", GgufValueType.UINT32, 1),
                GgufWriter.encodeKv("llama.feed_forward_length", GgufValueType.UINT32, ff),
                GgufWriter.encodeKv("llama.rope.dimension_count", GgufValueType.UINT32, headDim),
                GgufWriter.encodeKv("llama.rope.freq_base", GgufValueType.FLOAT32, 10000f),
                GgufWriter.encodeKv("llama.attention.head_count", GgufValueType.UINT32, heads),
                GgufWriter.encodeKv("llama.attention.head_count_kv", GgufValueType.UINT32, headsKv),
                GgufWriter.encodeKv("llama.attention.layer_norm_rms_epsilon", GgufValueType.FLOAT32, 1e-5f)));
        kvs.addAll(vocab.ggufKvs());
        record T(String name, long[] ne, GgmlType type, byte[] data) {}
        int q = heads * headDim, kv = headsKv * headDim;
        List<T> ts = List.of(
                new T("token_embd.weight", new long[] {embd, nVocab}, GgmlType.F16, DemoWeights.f16(w.randn(embd * nVocab))),
                new T("blk.0.attn_norm.weight", new long[] {embd}, GgmlType.F32, DemoWeights.f32(w.norm(embd))),
                new T("blk.0.attn_q.weight", new long[] {embd, q}, GgmlType.Q8_0, DemoWeights.q8_0(w.randn(embd * q))),
                new T("blk.0.attn_k.weight", new long[] {embd, kv}, GgmlType.Q8_0, DemoWeights.q8_0(w.randn(embd * kv))),
                new T("blk.0.attn_v.weight", new long[] {embd, kv}, GgmlType.Q8_0, DemoWeights.q8_0(w.randn(embd * kv))),
                new T("blk.0.attn_output.weight", new long[] {q, embd}, GgmlType.Q8_0, DemoWeights.q8_0(w.randn(q * embd))),
                new T("blk.0.ffn_norm.weight", new long[] {embd}, GgmlType.F32, DemoWeights.f32(w.norm(embd))),
                new T("blk.0.ffn_gate.weight", new long[] {embd, ff}, GgmlType.Q4_0, DemoWeights.q4_0(w.randn(embd * ff))),
                new T("blk.0.ffn_up.weight", new long[] {embd, ff}, GgmlType.Q4_0, DemoWeights.q4_0(w.randn(embd * ff))),
                new T("blk.0.ffn_down.weight", new long[] {ff, embd}, GgmlType.Q4_K, w.q4_kRandom(ff * embd)),
                new T("output_norm.weight", new long[] {embd}, GgmlType.F32, DemoWeights.f32(w.norm(embd))));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(GgufWriter.preamble(3, ts.size(), kvs.size()));
        kvs.forEach(out::writeBytes);
        long[] offsets = GgufWriter.tensorOffsets(ts.stream().map(t -> (long) t.data().length).toList(), 32);
        for (int i = 0; i < ts.size(); i++) {
            out.writeBytes(GgufWriter.encodeTensorInfo(ts.get(i).name(), ts.get(i).ne(), ts.get(i).type(), offsets[i]));
        }
        out.writeBytes(new byte[(int) (GgufWriter.align(out.size(), 32) - out.size())]);
        int start = out.size();
        for (int i = 0; i < ts.size(); i++) {
            out.writeBytes(new byte[(int) (start + offsets[i] - out.size())]);
            out.writeBytes(ts.get(i).data());
        }
        out.writeBytes(new byte[(int) (GgufWriter.align(out.size() - start, 32) - (out.size() - start))]);
        List<LayerRef> layers = new ArrayList<>();
        layers.add(blob("application/vnd.ollama.image.model", out.toByteArray(), null));
        layers.add(blob("application/vnd.ollama.image.template", DemoVocab.OLLAMA_TEMPLATE.getBytes(StandardCharsets.UTF_8), null));
        layers.add(blob("application/vnd.ollama.image.params", "{\"stop\":[\"\\u003c|end|\\u003e\"],\"temperature\":0.6}\n".getBytes(StandardCharsets.UTF_8), null));
        layers.add(blob("application/vnd.ollama.image.license", "Demo license: do what you like.".getBytes(StandardCharsets.UTF_8), null));
        manifest("registry.ollama.ai/library/demo-llama/latest",
                "{\"model_format\":\"gguf\",\"model_family\":\"llama\",\"model_families\":[\"llama\"],\"model_type\":\"80K\",\"file_type\":\"Q8_0\",\"architecture\":\"amd64\",\"os\":\"linux\"}\n",
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

    /** One tensor blob as Ollama stores an MLX affine int4 weight (group 64): packed codes with {@code .scale} / {@code .bias}. */
    private byte[] int4Blob(String name, int rows, int cols) {
        DemoWeights.Int4 q = w.int4(rows, cols);
        Map<String, Object[]> m = one(name, Dtype.U32, new long[] {rows, cols / 8}, q.codes());
        m.put(name + ".scale", new Object[] {Dtype.BF16, new long[] {rows, cols / 64}, q.scales()});
        m.put(name + ".bias", new Object[] {Dtype.BF16, new long[] {rows, cols / 64}, q.biases()});
        return safetensors(m, Map.of("quant_type", "int4", "group_size", "64"));
    }

    private LayerRef bf16Tensor(String name, long[] shape, float[] values) throws IOException {
        return blob("application/vnd.ollama.image.tensor", safetensors(one(name, Dtype.BF16, shape, DemoWeights.bf16(values)), null), name);
    }

    private LayerRef int4Tensor(String name, int rows, int cols) throws IOException {
        return blob("application/vnd.ollama.image.tensor", int4Blob(name, rows, cols), name);
    }

    private LayerRef jsonLayer(String name, byte[] json) throws IOException {
        return blob("application/vnd.ollama.image.json", json, name);
    }

    /**
     * The demo safetensors model, as Ollama stores an MLX int4 import: a complete one-layer
     * LlamaForCausalLM (tied embeddings), projections int4, embeddings and norms BF16, one blob per
     * tensor, and its config.json, generation_config.json, tokenizer.json and tokenizer_config.json.
     */
    private void safetensorsModel() throws IOException {
        int hidden = 64, heads = 4, headsKv = 2, headDim = hidden / heads, ff = 128, ctx = 2048;
        int nVocab = vocab.size();
        int q = heads * headDim, kv = headsKv * headDim;
        String l = "model.layers.0.";
        List<LayerRef> layers = new ArrayList<>(List.of(
                bf16Tensor("model.embed_tokens.weight", new long[] {nVocab, hidden}, w.randn(nVocab * hidden)),
                bf16Tensor(l + "input_layernorm.weight", new long[] {hidden}, w.norm(hidden)),
                int4Tensor(l + "self_attn.q_proj.weight", q, hidden),
                int4Tensor(l + "self_attn.k_proj.weight", kv, hidden),
                int4Tensor(l + "self_attn.v_proj.weight", kv, hidden),
                int4Tensor(l + "self_attn.o_proj.weight", hidden, q),
                bf16Tensor(l + "post_attention_layernorm.weight", new long[] {hidden}, w.norm(hidden)),
                int4Tensor(l + "mlp.gate_proj.weight", ff, hidden),
                int4Tensor(l + "mlp.up_proj.weight", ff, hidden),
                int4Tensor(l + "mlp.down_proj.weight", hidden, ff),
                bf16Tensor("model.norm.weight", new long[] {hidden}, w.norm(hidden))));
        int bos = vocab.id(DemoVocab.BOS), eos = vocab.id(DemoVocab.EOS);
        String config = """
                {
                  "architectures": ["LlamaForCausalLM"],
                  "model_type": "llama",
                  "hidden_size": %d,
                  "intermediate_size": %d,
                  "num_hidden_layers": 1,
                  "num_attention_heads": %d,
                  "num_key_value_heads": %d,
                  "head_dim": %d,
                  "hidden_act": "silu",
                  "max_position_embeddings": %d,
                  "rms_norm_eps": 1e-05,
                  "rope_theta": 10000.0,
                  "vocab_size": %d,
                  "tie_word_embeddings": true,
                  "attention_bias": false,
                  "mlp_bias": false,
                  "bos_token_id": %d,
                  "eos_token_id": %d,
                  "torch_dtype": "bfloat16"
                }
                """.formatted(hidden, ff, heads, headsKv, headDim, ctx, nVocab, bos, eos);
        layers.add(jsonLayer("config.json", config.getBytes(StandardCharsets.UTF_8)));
        layers.add(jsonLayer("generation_config.json",
                "{\"bos_token_id\": %d, \"eos_token_id\": %d}\n".formatted(bos, eos).getBytes(StandardCharsets.UTF_8)));
        layers.add(jsonLayer("tokenizer.json", vocab.tokenizerJson()));
        layers.add(jsonLayer("tokenizer_config.json", vocab.tokenizerConfig(ctx)));
        manifest("registry.ollama.ai/library/demo-st/int4",
                "{\"model_format\":\"safetensors\",\"model_family\":\"\",\"model_families\":null,\"model_type\":\"\",\"file_type\":\"int4\",\"capabilities\":[\"completion\"],\"architecture\":\"\",\"os\":\"\"}",
                layers);
    }

    private void imageModel() throws IOException {
        List<LayerRef> layers = new ArrayList<>();
        layers.add(blob("application/vnd.ollama.image.tensor", int4Blob("transformer/blocks.0.attn.qkv.weight", 64, 128),
                "transformer/blocks.0.attn.qkv.weight"));
        layers.add(blob("application/vnd.ollama.image.tensor",
                safetensors(one("blocks.0.norm.weight", Dtype.BF16, new long[] {128}, DemoWeights.bf16(w.randn(128))), null), "transformer/blocks.0.norm.weight"));
        layers.add(blob("application/vnd.ollama.image.tensor",
                safetensors(one("encoder.conv_in.weight", Dtype.F16, new long[] {8, 4}, DemoWeights.f16(w.randn(32))), null), "vae/encoder.conv_in.weight"));
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
