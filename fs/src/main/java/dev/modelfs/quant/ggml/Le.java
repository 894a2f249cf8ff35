package dev.modelfs.quant.ggml;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Little-endian unaligned layouts and small helpers shared by the kernels. */
final class Le {
    private Le() {}

    static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

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

    /** Two f32 as one little-endian 8-byte image: {@code a} first. */
    static long pair(float a, float b) {
        return (Float.floatToRawIntBits(a) & 0xFFFF_FFFFL) | ((long) Float.floatToRawIntBits(b) << 32);
    }

    /** Stores {@code a} at {@code off} and {@code b} at {@code off + 4} with one 8-byte write. */
    static void put2(MemorySegment dst, long off, float a, float b) {
        dst.set(I64, off, pair(a, b));
    }

    static void put(MemorySegment dst, long off, float v) {
        dst.set(F32, off, v);
    }
}
