package dev.modelfs.format;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The little-endian, unaligned value layouts every byte format here uses (GGUF, safetensors, GGML
 * and MLX blocks: docs/FORMATS.md), defined once. Unaligned because headers and blocks put values
 * at any byte offset.
 */
public final class LittleEndian {
    private LittleEndian() {}

    public static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
}
