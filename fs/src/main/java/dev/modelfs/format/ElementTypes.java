package dev.modelfs.format;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.safetensors.Dtype;

import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;

/**
 * The one correspondence between safetensors {@link Dtype}s and {@link GgmlType}s: the plain element
 * encodings both formats share (F32, F16, BF16, F64, I8, I16, I32, I64; docs/FORMATS.md §6.2, §8.4).
 *
 * <p>Invariants: the mapping is a bijection between those eight pairs; every other dtype (FP8, FP4,
 * unsigned, BOOL, C64) and every block-quantized GGML type has no counterpart.
 */
public final class ElementTypes {
    private static final Map<Dtype, GgmlType> TO_GGML = new EnumMap<>(Dtype.class);
    private static final Map<GgmlType, Dtype> TO_DTYPE = new EnumMap<>(GgmlType.class);

    static {
        pair(Dtype.F32, GgmlType.F32);
        pair(Dtype.F16, GgmlType.F16);
        pair(Dtype.BF16, GgmlType.BF16);
        pair(Dtype.F64, GgmlType.F64);
        pair(Dtype.I8, GgmlType.I8);
        pair(Dtype.I16, GgmlType.I16);
        pair(Dtype.I32, GgmlType.I32);
        pair(Dtype.I64, GgmlType.I64);
    }

    private ElementTypes() {
    }

    private static void pair(Dtype d, GgmlType g) {
        TO_GGML.put(d, g);
        TO_DTYPE.put(g, d);
    }

    /** The GGML type with the same element encoding as {@code d}, if any. */
    public static Optional<GgmlType> ggml(Dtype d) {
        return Optional.ofNullable(TO_GGML.get(d));
    }

    /** The safetensors dtype with the same element encoding as {@code t}, if any (none for quantized types). */
    public static Optional<Dtype> dtype(GgmlType t) {
        return Optional.ofNullable(TO_DTYPE.get(t));
    }
}
