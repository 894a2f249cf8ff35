package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufReader;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.format.gguf.GgufWriter;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Small GGUF files written in memory for the dialect tests: KVs and tensors in order, tensor bytes a
 * counting pattern (byte {@code i} of the data section is {@code i * 7 + 1}), so any slice is recognisable.
 */
public final class TinyGguf {
    private record Kv(String key, GgufValueType type, Object value) {}

    private record Tensor(String name, long[] ne, GgmlType type) {}

    private final List<Kv> kvs = new ArrayList<>();
    private final List<Tensor> tensors = new ArrayList<>();

    public TinyGguf kv(String key, GgufValueType type, Object value) {
        kvs.add(new Kv(key, type, value));
        return this;
    }

    /** {@code key} set to {@code value}: the earlier entry of that key, if any, removed first. */
    public TinyGguf replace(String key, GgufValueType type, Object value) {
        kvs.removeIf(k -> k.key().equals(key));
        return kv(key, type, value);
    }

    public TinyGguf str(String key, String value) {
        return kv(key, GgufValueType.STRING, value);
    }

    public TinyGguf u32(String key, int value) {
        return kv(key, GgufValueType.UINT32, value);
    }

    public TinyGguf f32(String key, float value) {
        return kv(key, GgufValueType.FLOAT32, value);
    }

    /** {@code n} tokens {@code t0, t1, ...} with scores and token types of the same length. */
    public TinyGguf vocab(int n) {
        List<Object> tokens = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            tokens.add("t" + i);
        }
        kv("tokenizer.ggml.model", GgufValueType.STRING, "llama");
        kv("tokenizer.ggml.tokens", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, tokens));
        kv("tokenizer.ggml.scores", GgufValueType.ARRAY, new GgufArray(GgufValueType.FLOAT32, Collections.nCopies(n, 0f)));
        return kv("tokenizer.ggml.token_type", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, Collections.nCopies(n, 1)));
    }

    public TinyGguf tensor(String name, GgmlType type, long... ne) {
        tensors.add(new Tensor(name, ne, type));
        return this;
    }

    public byte[] bytes() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(GgufWriter.preamble(3, tensors.size(), kvs.size()));
        for (Kv kv : kvs) {
            out.writeBytes(GgufWriter.encodeKv(kv.key(), kv.type(), kv.value()));
        }
        List<Long> sizes = new ArrayList<>();
        for (Tensor t : tensors) {
            long n = 1;
            for (long d : t.ne()) {
                n *= d;
            }
            sizes.add(t.type().rowBytes(t.ne()[0]) * (n / t.ne()[0]));
        }
        long[] offsets = GgufWriter.tensorOffsets(sizes, 32);
        for (int i = 0; i < tensors.size(); i++) {
            out.writeBytes(GgufWriter.encodeTensorInfo(tensors.get(i).name(), tensors.get(i).ne(), tensors.get(i).type(), offsets[i]));
        }
        out.writeBytes(new byte[(int) (GgufWriter.align(out.size(), 32) - out.size())]);
        long end = tensors.isEmpty() ? 0 : GgufWriter.align(offsets[tensors.size() - 1] + sizes.getLast(), 32);
        for (long i = 0; i < end; i++) {
            out.write((int) (i * 7 + 1));
        }
        return out.toByteArray();
    }

    public GgufFile header() {
        return GgufReader.read(MemorySegment.ofArray(bytes()));
    }

    /**
     * A gemma3 model as Ollama's converter writes a 4B-style file: {@code gemma3.vision.*} keys and
     * {@code mm.tokens_per_image}, no {@code layer_norm_rms_epsilon}, 4 more tokens than embedding rows, one text
     * block, a vision tower of one block and the projector.
     */
    public static TinyGguf gemma3Dialect() {
        return new TinyGguf().str("general.architecture", "gemma3").u32("gemma3.block_count", 1)
                .u32("gemma3.context_length", 131072).u32("gemma3.embedding_length", 64).u32("gemma3.feed_forward_length", 128)
                .u32("gemma3.attention.head_count", 2).u32("gemma3.attention.head_count_kv", 1)
                .f32("gemma3.rope.local.freq_base", 10000f).f32("gemma3.rope.global.freq_base", 1_000_000f)
                .u32("gemma3.mm.tokens_per_image", 256)
                .u32("gemma3.vision.block_count", 1).u32("gemma3.vision.embedding_length", 32).u32("gemma3.vision.feed_forward_length", 64)
                .u32("gemma3.vision.image_size", 32).u32("gemma3.vision.patch_size", 8).u32("gemma3.vision.attention.head_count", 2)
                .f32("gemma3.vision.attention.layer_norm_epsilon", 1e-6f)
                .vocab(20)
                .tensor("token_embd.weight", GgmlType.F16, 64, 16)
                .tensor("blk.0.attn_norm.weight", GgmlType.F32, 64)
                .tensor("output_norm.weight", GgmlType.F32, 64)
                .tensor("v.patch_embedding.weight", GgmlType.F16, 8, 8, 3, 32)
                .tensor("v.position_embedding.weight", GgmlType.F16, 32, 16)
                .tensor("v.blk.0.layer_norm1.weight", GgmlType.F32, 32)
                .tensor("v.blk.0.attn_output.weight", GgmlType.F16, 32, 32)
                .tensor("v.blk.0.mlp.fc1.weight", GgmlType.F16, 32, 64)
                .tensor("v.post_layernorm.weight", GgmlType.F32, 32)
                .tensor("mm.mm_input_projection.weight", GgmlType.F16, 64, 32)
                .tensor("mm.mm_soft_emb_norm.weight", GgmlType.F32, 32);
    }
}
