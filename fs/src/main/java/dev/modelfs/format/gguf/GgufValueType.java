package dev.modelfs.format.gguf;

import dev.modelfs.format.FormatException;

/**
 * The type of a GGUF metadata value ({@code gguf.h} {@code enum gguf_type}, docs/FORMATS.md §6.1).
 *
 * <p>Invariants: {@link #id()} is the on-disk id (0–12, unique). Each type has one Java
 * representation, used by {@link GgufKv} and {@link GgufArray}: {@code Byte} (UINT8, INT8),
 * {@code Short} (UINT16, INT16), {@code Integer} (UINT32, INT32), {@code Long} (UINT64, INT64),
 * {@code Float}, {@code Double}, {@code Boolean}, {@code String}, {@link GgufArray}. Unsigned values
 * are kept as the same-width signed Java value (two's complement bit pattern).
 */
public enum GgufValueType {
    UINT8(0, 1, Byte.class), INT8(1, 1, Byte.class), UINT16(2, 2, Short.class), INT16(3, 2, Short.class),
    UINT32(4, 4, Integer.class), INT32(5, 4, Integer.class), FLOAT32(6, 4, Float.class), BOOL(7, 1, Boolean.class),
    STRING(8, 0, String.class), ARRAY(9, 0, GgufArray.class), UINT64(10, 8, Long.class), INT64(11, 8, Long.class),
    FLOAT64(12, 8, Double.class);

    private static final GgufValueType[] BY_ID = new GgufValueType[13];

    static {
        for (GgufValueType t : values()) {
            BY_ID[t.id] = t;
        }
    }

    private final int id;
    private final int fixedSize;
    private final Class<?> javaType;

    GgufValueType(int id, int fixedSize, Class<?> javaType) {
        this.id = id;
        this.fixedSize = fixedSize;
        this.javaType = javaType;
    }

    /** The on-disk id. */
    public int id() {
        return id;
    }

    /**
     * The type with this on-disk id.
     *
     * @throws FormatException for an unknown id
     */
    public static GgufValueType byId(int id) {
        GgufValueType t = id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
        if (t == null) {
            throw new FormatException("unknown GGUF value type " + Integer.toUnsignedString(id));
        }
        return t;
    }

    /** Encoded size of a scalar value; 0 for STRING and ARRAY (variable). */
    int fixedSize() {
        return fixedSize;
    }

    /** Fewest bytes any encoded value of this type takes (string: its length field; array: type + count). */
    int minEncodedSize() {
        return switch (this) {
            case STRING -> 8;
            case ARRAY -> 12;
            default -> fixedSize;
        };
    }

    /** The Java class that represents values of this type. */
    Class<?> javaType() {
        return javaType;
    }

    /** Throws unless {@code value} is a non-null instance of {@link #javaType()}. */
    void checkValue(Object value, String what) {
        if (!javaType.isInstance(value)) {
            throw new FormatException(what + ": value of GGUF type " + this + " must be a " + javaType.getSimpleName()
                    + ", got " + (value == null ? "null" : value.getClass().getSimpleName()));
        }
    }
}
