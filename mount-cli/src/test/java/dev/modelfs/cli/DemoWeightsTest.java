package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/**
 * The demo's weight encodings, decoded here by the block layouts of ggml-common.h (Q8_0: f16 d, 32
 * int8; Q4_0: f16 d, 16 bytes of nibbles, element i low and i+16 high, value (q-8)*d): each decoded
 * value is within half a step of the input.
 */
class DemoWeightsTest {
    static ByteBuffer le(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Test
    void q8_0DecodesToTheInputWithinHalfAStep() {
        float[] v = new DemoWeights(1).randn(64);
        ByteBuffer b = le(DemoWeights.q8_0(v));
        assertEquals(2 * 34, b.capacity());
        for (int blk = 0; blk < 2; blk++) {
            float amax = 0;
            for (int i = 0; i < 32; i++) {
                amax = Math.max(amax, Math.abs(v[blk * 32 + i]));
            }
            float d = Float.float16ToFloat(b.getShort(blk * 34));
            assertEquals(amax / 127, d, amax / 127 / 500, "d is amax/127 in f16");
            for (int i = 0; i < 32; i++) {
                float x = d * b.get(blk * 34 + 2 + i);
                assertTrue(Math.abs(x - v[blk * 32 + i]) <= d * 0.5f + 1e-3f * d + amax * 2e-3f, "element " + i);
            }
        }
    }

    @Test
    void q4_0DecodesToTheInputWithinHalfAStep() {
        float[] v = new DemoWeights(2).randn(32);
        ByteBuffer b = le(DemoWeights.q4_0(v));
        assertEquals(18, b.capacity());
        float d = Float.float16ToFloat(b.getShort(0));
        for (int i = 0; i < 32; i++) {
            int q = i < 16 ? b.get(2 + i) & 0xf : (b.get(2 + i - 16) >> 4) & 0xf;
            float x = (q - 8) * d;
            assertTrue(Math.abs(x - v[i]) <= Math.abs(d) * 0.51f, "element " + i + ": " + x + " vs " + v[i]);
        }
    }

    @Test
    void floatsAreLittleEndianAndSeedsRepeat() {
        float[] v = {1f, -2.5f};
        assertArrayEquals(new byte[] {0, 0, (byte) 0x80, 0x3f, 0, 0, 0x20, (byte) 0xc0}, DemoWeights.f32(v));
        assertArrayEquals(new byte[] {0, 0x3c, 0, (byte) 0xc1}, DemoWeights.f16(v));      // IEEE half: 0x3c00, 0xc100
        assertArrayEquals(new byte[] {(byte) 0x80, 0x3f, 0x20, (byte) 0xc0}, DemoWeights.bf16(v));   // the f32's top halves
        assertArrayEquals(new DemoWeights(5).randn(10), new DemoWeights(5).randn(10));
        DemoWeights.Int4 q = new DemoWeights(6).int4(2, 128);
        assertEquals(128, q.codes().length);
        assertEquals(2 * 4, q.scales().length, "one bf16 scale per 64 values");
    }
}
