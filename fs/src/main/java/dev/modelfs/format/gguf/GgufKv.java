package dev.modelfs.format.gguf;

import dev.modelfs.format.FormatException;

import java.util.Objects;

/**
 * One GGUF metadata key/value pair.
 *
 * <p>Invariants: {@code key} non-null; {@code value} is a non-null instance of the Java type that
 * {@link GgufValueType} assigns to {@code type} (unsigned integers kept in the same-width signed Java
 * type). For a KV returned by {@link GgufReader}, {@code [rawOffset, rawOffset + rawLength)} is the
 * absolute byte range of the whole encoded KV (key string, type id, value) in the file, so a writer
 * can copy it verbatim; for KVs built in memory these two fields carry whatever the creator chose.
 */
public record GgufKv(String key, GgufValueType type, Object value, long rawOffset, long rawLength) {

    public GgufKv {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(type, "type");
        type.checkValue(value, "GGUF KV " + GgufText.quote(key));
    }

    /**
     * The value of an integer KV as a long: signed types sign-extended, unsigned types zero-extended.
     *
     * @throws FormatException if the type is not an integer type, or a UINT64 value exceeds
     *                         {@link Long#MAX_VALUE}
     */
    public long asLong() {
        long v = switch (type) {
            case UINT8 -> Byte.toUnsignedLong((Byte) value);
            case UINT16 -> Short.toUnsignedLong((Short) value);
            case UINT32 -> Integer.toUnsignedLong((Integer) value);
            case INT8, INT16, INT32, INT64, UINT64 -> ((Number) value).longValue();
            default -> throw new FormatException("GGUF KV " + GgufText.quote(key) + " is " + type + ", not an integer");
        };
        if (type == GgufValueType.UINT64 && v < 0) {
            throw new FormatException("GGUF KV " + GgufText.quote(key) + " value " + Long.toUnsignedString(v)
                    + " does not fit in a long");
        }
        return v;
    }

    /**
     * The value of a STRING KV.
     *
     * @throws FormatException if the type is not STRING
     */
    public String asString() {
        if (type != GgufValueType.STRING) {
            throw new FormatException("GGUF KV " + GgufText.quote(key) + " is " + type + ", not a string");
        }
        return (String) value;
    }
}
