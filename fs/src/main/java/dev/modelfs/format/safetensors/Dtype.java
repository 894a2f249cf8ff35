package dev.modelfs.format.safetensors;

import dev.modelfs.format.FormatException;

import java.util.HashMap;
import java.util.Map;

/**
 * A safetensors element type (docs/FORMATS.md §8.4), spelled exactly as in the header JSON.
 *
 * <p>Invariants: {@link #name()} is the exact upper-case header spelling; {@link #bits()} is the
 * element width in bits (4, 6, 8, 16, 32 or 64) and never changes. The declaration order of this
 * enum is <em>not</em> the reference writer's sort order; {@link SafetensorsWriter} uses its own
 * table for that (§8.3).
 */
public enum Dtype {
    BOOL(8), U8(8), I8(8), F8_E5M2(8), F8_E4M3(8), F8_E8M0(8), F8_E4M3FNUZ(8), F8_E5M2FNUZ(8),
    F4(4), F6_E2M3(6), F6_E3M2(6),
    I16(16), U16(16), F16(16), BF16(16),
    I32(32), U32(32), F32(32),
    C64(64), F64(64), I64(64), U64(64);

    private static final Map<String, Dtype> BY_NAME = new HashMap<>();

    static {
        for (Dtype d : values()) {
            BY_NAME.put(d.name(), d);
        }
    }

    private final int bits;

    Dtype(int bits) {
        this.bits = bits;
    }

    /** Bits per element (§8.4); sub-byte types pack elements little-endian into bytes. */
    public int bits() {
        return bits;
    }

    /** True for the plain IEEE/bfloat types F16, BF16, F32 and F64 only (not FP8/FP6/FP4, not C64). */
    public boolean isFloat() {
        return this == F16 || this == BF16 || this == F32 || this == F64;
    }

    /**
     * The dtype with exactly this header spelling (case-sensitive).
     *
     * @throws FormatException if {@code name} is null or not one of the §8.4 names
     */
    public static Dtype parse(String name) {
        Dtype d = name == null ? null : BY_NAME.get(name);
        if (d == null) {
            throw new FormatException("unknown safetensors dtype " + Names.quote(name));
        }
        return d;
    }
}
