package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The safetensors model view over demo-st:int4: its fp32 weights are the MLX formula applied to the
 * stored codes, scales and biases, and BF16 tensors pass through the bf16 folder unchanged.
 */
class SafetensorsModelViewTest {
    static final String Q = "model.layers.0.self_attn.q_proj.weight";
    static final String EMBED = "model.embed_tokens.weight";

    @TempDir
    static Path dir;
    static DemoTree demo;

    @BeforeAll
    static void demo() throws IOException {
        demo = new DemoTree(dir);
    }

    @Test
    void fp32WeightsAreTheMlxFormula() throws IOException {
        DemoTree.Safetensors blob = DemoTree.Safetensors.of(demo.read("demo-st:int4", "tensors/" + Q + ".safetensors"));
        float[] want = DemoTree.int4Values(blob, Q);
        DemoTree.Safetensors fp32 = DemoTree.Safetensors.of(demo.read("demo-st:int4", "fp32/model.safetensors"));
        assertEquals("F32", fp32.dtype(Q));
        assertArrayEquals(new long[] {64, 64}, fp32.shape(Q), "the logical shape: q = heads * head_dim rows of hidden");
        ByteBuffer got = fp32.data(Q);
        assertEquals(4 * want.length, got.capacity());
        for (int i = 0; i < want.length; i++) {
            assertEquals(want[i], got.getFloat(4 * i), Math.abs(want[i]) * 1e-6f, "element " + i);
        }
    }

    @Test
    void bf16TensorsPassThroughTheBf16Folder() throws IOException {
        DemoTree.Safetensors blob = DemoTree.Safetensors.of(demo.read("demo-st:int4", "tensors/" + EMBED + ".safetensors"));
        DemoTree.Safetensors bf16 = DemoTree.Safetensors.of(demo.read("demo-st:int4", "bf16/model.safetensors"));
        assertEquals("BF16", bf16.dtype(EMBED));
        assertArrayEquals(blob.shape(EMBED), bf16.shape(EMBED));
        assertEquals(blob.data(EMBED), bf16.data(EMBED), "the same bytes");
    }
}
