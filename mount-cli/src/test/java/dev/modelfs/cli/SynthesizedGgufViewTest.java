package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufReader;
import dev.modelfs.format.gguf.GgufTensorInfo;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The synthesized GGUF of demo-st:int4 (a one-layer llama: hidden 64, 4 heads of 16, 2 KV heads), in
 * F32: the hyperparameters as llama.cpp's converter writes them, and attn_q the MLX values with rows in
 * the converter's order ({@code permute}: per head, the two halves of the rotary dimensions interleaved).
 */
class SynthesizedGgufViewTest {
    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final String Q = "model.layers.0.self_attn.q_proj.weight";

    @Test
    void hyperparametersAndThePermutedQueryRows(@TempDir Path dir) throws IOException {
        DemoTree demo = new DemoTree(dir);
        byte[] bytes = demo.read("demo-st:int4", "model.fp32.gguf");
        GgufFile g = GgufReader.read(MemorySegment.ofArray(bytes));
        assertEquals(64L, ((Number) g.kv("llama.embedding_length").value()).longValue());
        assertEquals(1L, ((Number) g.kv("llama.block_count").value()).longValue());
        assertEquals(4L, ((Number) g.kv("llama.attention.head_count").value()).longValue());
        assertEquals(2L, ((Number) g.kv("llama.attention.head_count_kv").value()).longValue());
        GgufTensorInfo q = g.tensor("blk.0.attn_q.weight");
        assertEquals(GgmlType.F32, q.type());
        assertArrayEquals(new long[] {64, 64}, q.shape());
        float[] hf = DemoTree.int4Values(DemoTree.Safetensors.of(demo.read("demo-st:int4", "tensors/" + Q + ".safetensors")), Q);
        int cols = 64, heads = 4, headDim = 16;
        MemorySegment data = MemorySegment.ofArray(bytes);
        for (int h = 0; h < heads; h++) {
            for (int i = 0; i < headDim / 2; i++) {
                for (int j = 0; j < 2; j++) {
                    int ggufRow = h * headDim + 2 * i + j;
                    int hfRow = h * headDim + j * (headDim / 2) + i;
                    for (int c = 0; c < cols; c++) {
                        float want = hf[hfRow * cols + c];
                        float got = data.get(F32, g.dataStart() + q.offset() + 4L * (ggufRow * cols + c));
                        assertEquals(want, got, Math.abs(want) * 1e-6f, "row " + ggufRow + " col " + c);
                    }
                }
            }
        }
    }
}
