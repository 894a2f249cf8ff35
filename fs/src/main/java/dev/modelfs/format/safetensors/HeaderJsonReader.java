package dev.modelfs.format.safetensors;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import dev.modelfs.format.FormatException;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns safetensors header bytes into tensor entries and metadata, with the strictness of the
 * reference reader's serde deserialisation (§8.2 "InvalidHeader"/"InvalidHeaderDeserialization"):
 * strict UTF-8, one JSON object surrounded only by JSON whitespace, tensor values are objects with
 * exactly one each of {@code dtype} (string), {@code shape} (array of non-negative integers) and
 * {@code data_offsets} (array of exactly two non-negative integers), unknown fields ignored,
 * {@code __metadata__} an object of string to string or {@code null}. Duplicate keys at any of these
 * levels are rejected. Offsets/sizes are checked by {@link TensorEntry}; coverage by the parser.
 * Stateless and thread-safe.
 */
final class HeaderJsonReader {

    static final String METADATA_KEY = "__metadata__";

    /**
     * Most dimensions accepted in a shape (numpy's limit). The reference reader has none; the cap keeps
     * a hostile header from making us allocate one long per byte of header.
     */
    static final int MAX_RANK = 64;

    private static final JsonFactory JSON = JsonFactory.builder()
            // no shared symbol table: hostile headers cannot trigger its hash-flood guard
            .disable(JsonFactory.Feature.CANONICALIZE_FIELD_NAMES)
            .disable(JsonFactory.Feature.INTERN_FIELD_NAMES)
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxStringLength((int) SafetensorsHeader.MAX_HEADER_LENGTH)
                    .maxNameLength((int) SafetensorsHeader.MAX_HEADER_LENGTH)
                    .maxNestingDepth(128)
                    .build())
            .build();

    /** Result of reading the JSON: entries in document order and the metadata (null if absent/null). */
    record Parsed(List<TensorEntry> tensors, Map<String, String> metadata) {
    }

    private HeaderJsonReader() {
    }

    static Parsed read(byte[] header) {
        Reader reader = new InputStreamReader(new ByteArrayInputStream(header), StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT));
        try (JsonParser p = JSON.createParser(reader)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new FormatException("safetensors header is not a JSON object");
            }
            List<TensorEntry> tensors = new ArrayList<>();
            Set<String> seen = new HashSet<>();
            Map<String, String> metadata = null;
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                if (!seen.add(key)) {
                    throw new FormatException("safetensors header has duplicate key " + Names.quote(key));
                }
                p.nextToken();
                if (key.equals(METADATA_KEY)) {
                    metadata = readMetadata(p);
                } else {
                    tensors.add(readTensor(p, key));
                }
            }
            if (t != JsonToken.END_OBJECT) {
                throw new FormatException("safetensors header is not a JSON object");
            }
            if (p.nextToken() != null) {
                throw new FormatException("safetensors header has data after the JSON object");
            }
            return new Parsed(tensors, metadata);
        } catch (CharacterCodingException e) {
            throw new FormatException("safetensors header is not valid UTF-8");
        } catch (IOException e) {
            throw new FormatException("safetensors header is not valid JSON: " + oneLine(e));
        }
    }

    private static Map<String, String> readMetadata(JsonParser p) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_NULL) {
            return null;
        }
        if (p.currentToken() != JsonToken.START_OBJECT) {
            throw new FormatException("safetensors __metadata__ is not an object");
        }
        Map<String, String> m = new LinkedHashMap<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String k = p.currentName();
            if (p.nextToken() != JsonToken.VALUE_STRING) {
                throw new FormatException("safetensors __metadata__ value of " + Names.quote(k) + " is not a string");
            }
            if (m.putIfAbsent(k, p.getText()) != null) {
                throw new FormatException("safetensors __metadata__ has duplicate key " + Names.quote(k));
            }
        }
        return m;
    }

    private static TensorEntry readTensor(JsonParser p, String name) throws IOException {
        String what = "tensor " + Names.quote(name);
        if (p.currentToken() != JsonToken.START_OBJECT) {
            throw new FormatException(what + ": info is not an object");
        }
        String dtype = null;
        long[] shape = null;
        long[] offsets = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            p.nextToken();
            switch (field) {
                case "dtype" -> {
                    if (dtype != null) {
                        throw new FormatException(what + ": duplicate field dtype");
                    }
                    if (p.currentToken() != JsonToken.VALUE_STRING) {
                        throw new FormatException(what + ": dtype is not a string");
                    }
                    dtype = p.getText();
                }
                case "shape" -> {
                    if (shape != null) {
                        throw new FormatException(what + ": duplicate field shape");
                    }
                    shape = readIntArray(p, what + " shape");
                }
                case "data_offsets" -> {
                    if (offsets != null) {
                        throw new FormatException(what + ": duplicate field data_offsets");
                    }
                    offsets = readIntArray(p, what + " data_offsets");
                    if (offsets.length != 2) {
                        throw new FormatException(what + ": data_offsets has " + offsets.length + " numbers, not 2");
                    }
                }
                default -> p.skipChildren();
            }
        }
        if (dtype == null || shape == null || offsets == null) {
            throw new FormatException(what + ": missing field "
                    + (dtype == null ? "dtype" : shape == null ? "shape" : "data_offsets"));
        }
        Dtype d;
        try {
            d = Dtype.parse(dtype);
        } catch (FormatException e) {
            throw new FormatException(what + ": " + e.getMessage());
        }
        return new TensorEntry(name, d, shape, offsets[0], offsets[1]);
    }

    private static long[] readIntArray(JsonParser p, String what) throws IOException {
        if (p.currentToken() != JsonToken.START_ARRAY) {
            throw new FormatException(what + " is not an array");
        }
        long[] out = new long[4];
        int n = 0;
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t != JsonToken.VALUE_NUMBER_INT) {
                throw new FormatException(what + " holds a non-integer");
            }
            if (p.getNumberType() != JsonParser.NumberType.INT && p.getNumberType() != JsonParser.NumberType.LONG) {
                throw new FormatException(what + " holds a number out of range");
            }
            long v = p.getLongValue();
            if (v < 0) {
                throw new FormatException(what + " holds a negative number");
            }
            if (n == MAX_RANK) {
                throw new FormatException(what + " has more than " + MAX_RANK + " numbers");
            }
            if (n == out.length) {
                out = Arrays.copyOf(out, n * 2);
            }
            out[n++] = v;
        }
        return Arrays.copyOf(out, n);
    }

    private static String oneLine(IOException e) {
        String m = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage();
        if (m == null) {
            m = e.getClass().getSimpleName();
        }
        m = m.replaceAll("\\s+", " ").strip();
        return m.length() > 100 ? m.substring(0, 100) + "..." : m;
    }
}
