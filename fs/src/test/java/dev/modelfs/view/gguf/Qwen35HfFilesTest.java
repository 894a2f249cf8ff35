package dev.modelfs.view.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.LittleEndian;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.format.gguf.GgufWriter;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.format.safetensors.SafetensorsHeader;
import dev.modelfs.format.safetensors.SafetensorsParser;
import dev.modelfs.format.safetensors.TensorEntry;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.view.VectorStore;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Hugging Face folder of a one-layer Qwen 3.5 GGUF as llama.cpp's converter writes it (2 key heads, 4 value heads of
 * 2, every V head tiled; an MTP layer after the text layer), read through the store as a client reads it: the V rows
 * and {@code ssm_out}'s column blocks grouped again, {@code A_log = log(-ssm_a)} (Java's {@link Math#log} on the f64
 * value, rounded once), the norms {@code stored - 1} but {@code ssm_norm}, the conv unsqueezed, the MTP layer left out
 * (docs/FORMATS.md §7.3). Expected values follow from the GGUF's with the formulas written out here.
 */
class Qwen35HfFilesTest {
    private static final int H = 8, KH = 2, VH = 4, KD = 2, VD = 2, CONV = 4, FF = 8, VOCAB = 4;
    private static final int QK = 2 * KH * KD, CH = QK + VH * VD;   // 8 q/k channels, 16 in all
    /** GGUF (tiled) position of HF (grouped) V head h: (h mod r) * KH + h / r, r = 2. */
    private static final int[] TILED = {0, 2, 1, 3};

    @TempDir
    Path root;

    /** Element {@code i} of tensor {@code t} of the GGUF: distinct, exact in F16. */
    static float value(int t, int i) {
        return (t + 1) * 0.5f + i / 64f;
    }

    record T(String name, long[] ne, GgmlType type) {
        long elements() {
            long n = 1;
            for (long x : ne) {
                n *= x;
            }
            return n;
        }
    }

    static final List<T> TENSORS = List.of(
            new T("token_embd.weight", new long[] {H, VOCAB}, GgmlType.F32),
            new T("output_norm.weight", new long[] {H}, GgmlType.F32),
            new T("output.weight", new long[] {H, VOCAB}, GgmlType.F32),
            new T("blk.0.attn_norm.weight", new long[] {H}, GgmlType.F32),
            new T("blk.0.post_attention_norm.weight", new long[] {H}, GgmlType.F32),
            new T("blk.0.attn_qkv.weight", new long[] {H, CH}, GgmlType.F16),
            new T("blk.0.attn_gate.weight", new long[] {H, VH * VD}, GgmlType.F32),
            new T("blk.0.ssm_alpha.weight", new long[] {H, VH}, GgmlType.F32),
            new T("blk.0.ssm_beta.weight", new long[] {H, VH}, GgmlType.F32),
            new T("blk.0.ssm_a", new long[] {VH}, GgmlType.F32),
            new T("blk.0.ssm_dt.bias", new long[] {VH}, GgmlType.F32),
            new T("blk.0.ssm_conv1d.weight", new long[] {CONV, CH}, GgmlType.F32),
            new T("blk.0.ssm_norm.weight", new long[] {VD}, GgmlType.F32),
            new T("blk.0.ssm_out.weight", new long[] {VH * VD, H}, GgmlType.F16),
            new T("blk.0.ffn_gate.weight", new long[] {H, FF}, GgmlType.F32),
            new T("blk.0.ffn_up.weight", new long[] {H, FF}, GgmlType.F32),
            new T("blk.0.ffn_down.weight", new long[] {FF, H}, GgmlType.F32),
            new T("blk.1.nextn.eh_proj.weight", new long[] {2 * H, H}, GgmlType.F32));

    static int index(String name) {
        for (int i = 0; i < TENSORS.size(); i++) {
            if (TENSORS.get(i).name().equals(name)) {
                return i;
            }
        }
        throw new AssertionError(name);
    }

    /** The stored value of GGUF element {@code i}; ssm_a negative, as -exp(A_log) is. */
    static float stored(String name, int i) {
        float v = value(index(name), i);
        return name.equals("blk.0.ssm_a") ? -v : v;
    }

    static byte[] gguf() throws IOException {
        String p = "qwen35.";
        Map<String, Object[]> kvs = new LinkedHashMap<>();
        kvs.put("general.architecture", new Object[] {GgufValueType.STRING, "qwen35"});
        for (Object[] kv : new Object[][] {{"block_count", 2}, {"context_length", 64}, {"embedding_length", H},
                {"feed_forward_length", FF}, {"attention.head_count", 2}, {"attention.head_count_kv", 1},
                {"attention.key_length", 16}, {"attention.value_length", 16}, {"rope.dimension_count", 4},
                {"nextn_predict_layers", 1}, {"ssm.conv_kernel", CONV}, {"ssm.state_size", KD}, {"ssm.group_count", KH},
                {"ssm.time_step_rank", VH}, {"ssm.inner_size", VH * VD}, {"full_attention_interval", 4}}) {
            kvs.put(p + kv[0], new Object[] {GgufValueType.UINT32, kv[1]});
        }
        kvs.put(p + "attention.layer_norm_rms_epsilon", new Object[] {GgufValueType.FLOAT32, 1e-6f});
        kvs.put(p + "rope.freq_base", new Object[] {GgufValueType.FLOAT32, 1e7f});
        kvs.put("tokenizer.ggml.model", new Object[] {GgufValueType.STRING, "gpt2"});
        kvs.put("tokenizer.ggml.pre", new Object[] {GgufValueType.STRING, "qwen35"});
        kvs.put("tokenizer.ggml.tokens", new Object[] {GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, List.of("a", "b", "ab", "<|end|>"))});
        kvs.put("tokenizer.ggml.token_type", new Object[] {GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(1, 1, 1, 3))});
        kvs.put("tokenizer.ggml.merges", new Object[] {GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, List.of("a b"))});
        kvs.put("tokenizer.ggml.eos_token_id", new Object[] {GgufValueType.UINT32, 3});
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(GgufWriter.preamble(3, TENSORS.size(), kvs.size()));
        for (var e : kvs.entrySet()) {
            out.write(GgufWriter.encodeKv(e.getKey(), (GgufValueType) e.getValue()[0], e.getValue()[1]));
        }
        List<Long> sizes = new ArrayList<>();
        for (T t : TENSORS) {
            sizes.add(t.elements() * (t.type() == GgmlType.F16 ? 2 : 4));
        }
        long[] offsets = GgufWriter.tensorOffsets(sizes, 32);
        for (int i = 0; i < TENSORS.size(); i++) {
            out.write(GgufWriter.encodeTensorInfo(TENSORS.get(i).name(), TENSORS.get(i).ne(), TENSORS.get(i).type(), offsets[i]));
        }
        while (out.size() % 32 != 0) {
            out.write(0);
        }
        for (int i = 0; i < TENSORS.size(); i++) {
            T t = TENSORS.get(i);
            ByteBuffer b = ByteBuffer.allocate((int) GgufWriter.align(sizes.get(i), 32)).order(ByteOrder.LITTLE_ENDIAN);
            for (int e = 0; e < t.elements(); e++) {
                if (t.type() == GgmlType.F16) {
                    b.putShort(Float.floatToFloat16(stored(t.name(), e)));
                } else {
                    b.putFloat(stored(t.name(), e));
                }
            }
            out.write(b.array());
        }
        return out.toByteArray();
    }

    record File(MemorySegment bytes, SafetensorsHeader header) {
        float get(String tensor, long element) {
            TensorEntry e = header.get(tensor);
            long at = header.dataStart() + e.begin();
            return e.dtype() == Dtype.F16 ? Float.float16ToFloat(bytes.get(LittleEndian.I16, at + 2 * element))
                    : bytes.get(LittleEndian.F32, at + 4 * element);
        }
    }

    File read(DirNode dir, String path) throws IOException {
        DirNode d = dir;
        String[] parts = path.split("/");
        for (int i = 0; i < parts.length - 1; i++) {
            d = (DirNode) d.child(parts[i]);
        }
        MemorySegment bytes = MemorySegment.ofArray(VectorStore.read(root, (FileNode) d.child(parts[parts.length - 1])));
        return new File(bytes, SafetensorsParser.parse(bytes));
    }

    /** GGUF row of HF row r of a tensor whose rows [offset, offset + 4 * dim) are V heads of dim rows. */
    static int ggufRow(int r, int offset, int dim) {
        if (r < offset || r >= offset + VH * dim) {
            return r;
        }
        int h = (r - offset) / dim;
        return offset + TILED[h] * dim + (r - offset) % dim;
    }

    @Test
    void theFolderPutsTheDeltaNetBackAsTransformersHasIt() throws IOException {
        DirNode dir = VectorStore.model(root, "q35", "{\"model_format\":\"gguf\",\"model_family\":\"qwen35\",\"file_type\":\"F16\"}",
                List.of(new VectorStore.Layer("application/vnd.ollama.image.model", gguf(), null)), List.of(new GgufModelView()));
        String config = new String(VectorStore.read(root, (FileNode) dir.child("config.json")), StandardCharsets.UTF_8);
        assertTrue(config.contains("\"Qwen3_5ForCausalLM\"") && config.contains("\"num_hidden_layers\" : 1"), config);
        for (String variant : List.of("model.safetensors", "fp32/model.safetensors", "bf16/model.safetensors")) {
            File f = read(dir, variant);
            List<String> names = new ArrayList<>();
            f.header().tensors().forEach(e -> names.add(e.name()));
            assertEquals(17, names.size(), variant + ": " + names);
            assertFalse(names.stream().anyMatch(n -> n.contains("nextn") || n.startsWith("model.layers.1.")), "the MTP layer is left out");
            if (variant.startsWith("bf16")) {
                assertEquals(Dtype.BF16, f.header().get("model.layers.0.linear_attn.A_log").dtype());
                continue;
            }
            String l = "model.layers.0.linear_attn.";
            assertArrayEquals(new long[] {CH, 1, CONV}, f.header().get(l + "conv1d.weight").shape());
            assertEquals(variant.startsWith("fp32") ? Dtype.F32 : Dtype.F16, f.header().get(l + "out_proj.weight").dtype());
            for (int r = 0; r < CH; r++) {
                for (int c = 0; c < H; c++) {
                    assertEquals(stored("blk.0.attn_qkv.weight", ggufRow(r, QK, VD) * H + c), f.get(l + "in_proj_qkv.weight", r * H + c),
                            "in_proj_qkv row " + r);
                }
                for (int k = 0; k < CONV; k++) {
                    assertEquals(stored("blk.0.ssm_conv1d.weight", ggufRow(r, QK, VD) * CONV + k), f.get(l + "conv1d.weight", r * CONV + k));
                }
            }
            for (int r = 0; r < VH * VD; r++) {
                assertEquals(stored("blk.0.attn_gate.weight", ggufRow(r, 0, VD) * H + 3), f.get(l + "in_proj_z.weight", r * H + 3));
            }
            for (int h = 0; h < VH; h++) {
                assertEquals((float) Math.log(-(double) stored("blk.0.ssm_a", TILED[h])), f.get(l + "A_log", h), "A_log " + h);
                assertEquals(stored("blk.0.ssm_dt.bias", TILED[h]), f.get(l + "dt_bias", h));
                assertEquals(stored("blk.0.ssm_alpha.weight", TILED[h] * H + 5), f.get(l + "in_proj_a.weight", h * H + 5));
                assertEquals(stored("blk.0.ssm_beta.weight", TILED[h] * H + 1), f.get(l + "in_proj_b.weight", h * H + 1));
            }
            for (int r = 0; r < H; r++) {   // out_proj [H, V]: column block h (VD columns) is GGUF block TILED[h]
                for (int c = 0; c < VH * VD; c++) {
                    assertEquals(stored("blk.0.ssm_out.weight", r * VH * VD + TILED[c / VD] * VD + c % VD),
                            f.get(l + "out_proj.weight", r * VH * VD + c), "out_proj row " + r + " col " + c);
                }
            }
            assertEquals(stored("blk.0.ssm_norm.weight", 1), f.get(l + "norm.weight", 1), "ssm_norm is not shifted");
            assertEquals(stored("blk.0.attn_norm.weight", 2) - 1f, f.get("model.layers.0.input_layernorm.weight", 2));
            assertEquals(stored("output_norm.weight", 0) - 1f, f.get("model.norm.weight", 0));
        }
    }
}
