package dev.modelfs.quant.ggml;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I16;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Small helpers and tables shared by the kernels (layouts: {@link dev.modelfs.format.LittleEndian}). */
final class Le {
    private Le() {}

    static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;

    /** IEEE half at {@code off} as f32 (exact; ggml's GGML_FP16_TO_FP32). */
    static float f16(MemorySegment s, long off) {
        return Float.float16ToFloat(s.get(I16, off));
    }

    static int u8(MemorySegment s, long off) {
        return s.get(U8, off) & 0xFF;
    }

    static int u16(MemorySegment s, long off) {
        return s.get(I16, off) & 0xFFFF;
    }

    /** {@code (float) (byte) i} for i = 0..255: int8 → f32 by table (same value as the conversion). */
    static final float[] S8_F32 = new float[256];
    /** {@code (float) i} for i = 0..63 (4-, 5- and 6-bit codes). */
    static final float[] U6_F32 = new float[64];
    /** {@code (float) (i - 8)} for i = 0..15 (Q4_0 codes). */
    static final float[] Q4_0_F32 = new float[16];
    /** Q3_K value of code {@code low | hbit << 2}: {@code low - (hbit ? 0 : 4)}, as f32. */
    static final float[] Q3_K_F32 = {-4, -3, -2, -1, 0, 1, 2, 3};
    /** {@code (float) (i - 32)} for i = 0..63 (Q6_K codes). */
    static final float[] Q6_K_F32 = new float[64];

    static {
        for (int i = 0; i < 256; i++) {
            S8_F32[i] = (byte) i;
        }
        for (int i = 0; i < 64; i++) {
            U6_F32[i] = i;
            Q6_K_F32[i] = i - 32;
        }
        for (int i = 0; i < 16; i++) {
            Q4_0_F32[i] = i - 8;
        }
    }

    static void put(MemorySegment dst, long off, float v) {
        dst.set(F32, off, v);
    }
}
