package dev.modelfs.format.safetensors;

import dev.modelfs.format.FormatException;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A parsed safetensors header (docs/FORMATS.md §8.1).
 *
 * <p>Invariants: {@code 0 <= headerLength <= 100_000_000}; {@code tensors} is immutable, in header
 * JSON order, with unique names; {@code metadata} is null (absent or JSON {@code null}) or an
 * immutable map in header order. Offsets of the entries are relative to {@link #dataStart()}.
 * Headers returned by {@link SafetensorsParser#parse} additionally satisfy every check of §8.2
 * (contiguous offsets from 0 covering the data buffer exactly).
 */
public record SafetensorsHeader(long headerLength, List<TensorEntry> tensors, Map<String, String> metadata) {

    /** Largest header the reference reader accepts (§8.2). */
    public static final long MAX_HEADER_LENGTH = 100_000_000L;

    public SafetensorsHeader {
        if (headerLength < 0 || headerLength > MAX_HEADER_LENGTH) {
            throw new FormatException("safetensors header length " + headerLength + " out of range");
        }
        tensors = TensorList.of(Objects.requireNonNull(tensors, "tensors"));
        if (metadata != null) {
            LinkedHashMap<String, String> copy = new LinkedHashMap<>(metadata);
            if (copy.containsKey(null) || copy.containsValue(null)) {
                throw new FormatException("safetensors __metadata__ contains null");
            }
            metadata = Collections.unmodifiableMap(copy);
        }
    }

    /** Absolute file offset of the data buffer: {@code 8 + headerLength}. */
    public long dataStart() {
        return 8 + headerLength;
    }

    /** The tensor with this name, or null. */
    public TensorEntry get(String name) {
        return ((TensorList) tensors).byName(name);
    }
}
