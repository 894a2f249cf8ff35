package dev.modelfs.quant.mlx;

/**
 * Decoders for the small float formats of the MLX fp modes, as MLX decodes them (docs/FORMATS.md §5.7):
 * FP4 E2M1, FP8 E4M3 (0x7F/0xFF decode to ±480, not NaN) and the E8M0 scale (0 → 2^-127, 255 → +inf).
 * The kernels of {@link MlxDequantizer} read the same tables.
 */
public final class MlxFloatCodes {

    /** E2M1 value of each 4-bit code. */
    static final float[] E2M1 = {
        0f, 0.5f, 1f, 1.5f, 2f, 3f, 4f, 6f,
        -0f, -0.5f, -1f, -1.5f, -2f, -3f, -4f, -6f,
    };

    /** MLX E4M3 value of each byte. */
    static final float[] E4M3 = new float[256];

    /** MLX E8M0 value of each byte. */
    static final float[] E8M0 = new float[256];

    static {
        for (int b = 0; b < 256; b++) {
            int e = (b >>> 3) & 15;
            int m = b & 7;
            // (1+m/8)·2^(e-7) = (8+m)·2^(e-10); (m/8)·2^-6 = m·2^-9: both exact in float
            float v = e == 0 ? m * 0x1p-9f : (8 + m) * Math.scalb(1f, e - 10);
            E4M3[b] = (b & 0x80) != 0 ? -v : v;
            E8M0[b] = b == 0 ? Float.intBitsToFloat(0x0040_0000) // 2^-127, a subnormal
                    : b == 255 ? Float.POSITIVE_INFINITY
                    : Float.intBitsToFloat(b << 23);
        }
    }

    private MlxFloatCodes() {}

    /** Value of a 4-bit E2M1 code (low 4 bits of {@code code}). */
    public static float e2m1(int code) {
        return E2M1[code & 15];
    }

    /** Value of an FP8 E4M3 byte as MLX decodes it. */
    public static float e4m3(int code) {
        return E4M3[code & 0xFF];
    }

    /** Value of an E8M0 scale byte as MLX decodes it. */
    public static float e8m0(int code) {
        return E8M0[code & 0xFF];
    }
}
