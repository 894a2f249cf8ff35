package dev.modelfs.view.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.modelfs.format.LittleEndian;
import dev.modelfs.format.safetensors.SafetensorsHeader;
import dev.modelfs.format.safetensors.SafetensorsParser;
import dev.modelfs.format.safetensors.TensorEntry;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.view.VectorStore;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Hugging Face files of the {@code tiny-llama.gguf} vector (2 heads of 16, 1 KV head): transformers'
 * llama names, and q/k rows back in transformers' order, the inverse of llama.cpp's converter's
 * {@code permute} (GGUF row h*d + 2i + j holds HF row h*d + j*d/2 + i), checked against the GGUF-named file.
 */
class GgufHfFilesTest {
    @TempDir
    Path root;

    record File(MemorySegment bytes, SafetensorsHeader header) {
        float get(String tensor, long element) {
            TensorEntry e = header.get(tensor);
            return bytes.get(LittleEndian.F32, header.dataStart() + e.begin() + 4 * element);
        }
    }

    File read(DirNode dir, String path) throws IOException {
        MemorySegment bytes = bytes(root, dir, path);
        return new File(bytes, SafetensorsParser.parse(bytes));
    }

    /** The bytes of file {@code path} below {@code dir}, read through the store at {@code root}. */
    static MemorySegment bytes(Path root, DirNode dir, String path) throws IOException {
        DirNode d = dir;
        String[] parts = path.split("/");
        for (int i = 0; i < parts.length - 1; i++) {
            d = (DirNode) d.child(parts[i]);
        }
        return MemorySegment.ofArray(VectorStore.read(root, (FileNode) d.child(parts[parts.length - 1])));
    }

    @Test
    void llamaNamesAndTransformersRowOrder() throws IOException {
        DirNode dir = VectorStore.tinyLlama(root, List.of(new GgufModelView()));
        File hf = read(dir, "fp32/model.safetensors");
        File gguf = read(dir, "gguf/fp32/model.safetensors");
        Set<String> names = new TreeSet<>();
        hf.header().tensors().forEach(e -> names.add(e.name()));
        String l = "model.layers.0.";
        assertEquals(new TreeSet<>(List.of("model.embed_tokens.weight", l + "input_layernorm.weight", l + "self_attn.q_proj.weight",
                l + "self_attn.k_proj.weight", l + "self_attn.v_proj.weight", l + "self_attn.o_proj.weight",
                l + "post_attention_layernorm.weight", l + "mlp.gate_proj.weight", l + "mlp.up_proj.weight", l + "mlp.down_proj.weight",
                "model.norm.weight", "lm_head.weight")), names);
        checkPermuted(hf, l + "self_attn.q_proj.weight", gguf, "blk.0.attn_q.weight", 2, 16, 32, true);
        checkPermuted(hf, l + "self_attn.k_proj.weight", gguf, "blk.0.attn_k.weight", 1, 16, 32, true);
        checkPermuted(hf, l + "self_attn.v_proj.weight", gguf, "blk.0.attn_v.weight", 1, 16, 32, false);
        assertArrayEquals(new long[] {32, 32}, hf.header().get(l + "self_attn.q_proj.weight").shape());
    }

    static void checkPermuted(File hf, String hfName, File gguf, String ggufName, int heads, int headDim, int cols, boolean permuted) {
        for (int h = 0; h < heads; h++) {
            for (int i = 0; i < headDim / 2; i++) {
                for (int j = 0; j < 2; j++) {
                    int ggufRow = h * headDim + 2 * i + j;
                    int hfRow = permuted ? h * headDim + j * (headDim / 2) + i : ggufRow;
                    for (int c = 0; c < cols; c++) {
                        assertEquals(gguf.get(ggufName, (long) ggufRow * cols + c), hf.get(hfName, (long) hfRow * cols + c),
                                hfName + " row " + hfRow + " col " + c);
                    }
                }
            }
        }
    }
}
