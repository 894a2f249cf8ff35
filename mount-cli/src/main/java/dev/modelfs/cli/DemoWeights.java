package dev.modelfs.cli;

import dev.modelfs.quant.FloatCasts;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

/**
 * Random weights of the demo models and their encodings: plain floats (F32, F16, BF16), ggml's Q8_0 and
 * Q4_0 (quantized from the values as ggml's reference quantizers do), ggml Q4_K and MLX affine int4
 * (random codes with small scales). Deterministic: the same seed gives the same bytes. Not thread-safe.
 */
final class DemoWeights {
    private final Random rnd;

    DemoWeights(long seed) {
        rnd = new Random(seed);
    }

    /** {@code n} values of a weight matrix: normal, standard deviation 0.05. */
    float[] randn(int n) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) {
            f[i] = (float) (rnd.nextGaussian() * 0.05);
        }
        return f;
    }

    /** {@code n} values of a norm weight: 1 plus a little noise. */
    float[] norm(int n) {
        float[] f = randn(n);
        for (int i = 0; i < n; i++) {
            f[i] += 1;
        }
        return f;
    }

    static byte[] f32(float[] v) {
        ByteBuffer b = le(v.length * 4);
        for (float x : v) {
            b.putFloat(x);
        }
        return b.array();
    }

    static byte[] f16(float[] v) {
        ByteBuffer b = le(v.length * 2);
        for (float x : v) {
            b.putShort(Float.floatToFloat16(x));
        }
        return b.array();
    }

    static byte[] bf16(float[] v) {
        ByteBuffer b = le(v.length * 2);
        for (float x : v) {
            b.putShort(FloatCasts.f32ToBf16(x));
        }
        return b.array();
    }

    /** ggml's Q8_0: per 32 values d = amax/127 (f16), q = round(x/d). */
    static byte[] q8_0(float[] v) {
        ByteBuffer b = le(v.length / 32 * 34);
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

    /** ggml's Q4_0: per 32 values d = max/-8 (the value of largest magnitude), q = x/d + 8.5 truncated, clamped to 15. */
    static byte[] q4_0(float[] v) {
        ByteBuffer b = le(v.length / 32 * 18);
        for (int blk = 0; blk < v.length / 32; blk++) {
            float max = 0;
            for (int i = 0; i < 32; i++) {
                float x = v[blk * 32 + i];
                if (Math.abs(x) > Math.abs(max)) {
                    max = x;
                }
            }
            float d = max / -8;
            float id = d == 0 ? 0 : 1 / d;
            b.putShort(Float.floatToFloat16(d));
            for (int i = 0; i < 16; i++) {
                int lo = Math.min(15, (int) (v[blk * 32 + i] * id + 8.5f));
                int hi = Math.min(15, (int) (v[blk * 32 + 16 + i] * id + 8.5f));
                b.put((byte) (lo | hi << 4));
            }
        }
        return b.array();
    }

    /** ggml Q4_K blocks of random codes and 6-bit scales; d and dmin small so values stay within about ±0.3. */
    byte[] q4_kRandom(int elements) {
        ByteBuffer b = le(elements / 256 * 144);
        byte[] rest = new byte[140];
        for (int blk = 0; blk < elements / 256; blk++) {
            b.putShort(Float.floatToFloat16(0.0002f + rnd.nextFloat() * 0.0001f));   // d
            b.putShort(Float.floatToFloat16(0.0002f + rnd.nextFloat() * 0.0001f));   // dmin
            rnd.nextBytes(rest);
            b.put(rest);
        }
        return b.array();
    }

    /** MLX affine int4 of a {@code rows × cols} matrix, group 64: packed codes, bf16 scales and biases (f16-exact). */
    record Int4(byte[] codes, byte[] scales, byte[] biases) {
    }

    Int4 int4(int rows, int cols) {
        byte[] codes = new byte[rows * cols / 2];
        rnd.nextBytes(codes);
        float[] scale = new float[rows * cols / 64];
        float[] bias = new float[rows * cols / 64];
        for (int i = 0; i < scale.length; i++) {
            scale[i] = 0.001f + rnd.nextFloat() * 0.01f;
            bias[i] = -8 * scale[i];
        }
        return new Int4(codes, bf16(scale), bf16(bias));
    }

    private static ByteBuffer le(int bytes) {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }
}
