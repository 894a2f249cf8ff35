package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * snowflake-arctic-embed2 as Ollama published it: Ollama's {@code handle_snowflake_arctic_embed2} (docs/FORMATS.md
 * §12.6). Markers: architecture {@code bert}, tokenizer model {@code t5}, and
 * {@code tokenizer.ggml.precompiled_charsmap} stored as an array of one-character base64 strings; llama.cpp wants
 * the decoded bytes (a UINT8 array).
 */
public record SnowflakeCharsmap() implements DialectHandler {
    private static final String KEY = "tokenizer.ggml.precompiled_charsmap";

    @Override
    public String name() {
        return "snowflake-arctic-embed2 tokenizer";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    @Override
    public boolean matches(GgufFile g) {
        GgufKv kv = g.kv(KEY);
        return Markers.architecture(g, "bert") && Markers.stringEquals(g, "tokenizer.ggml.model", "t5")
                && kv != null && kv.value() instanceof GgufArray a && a.elementType() == GgufValueType.STRING;
    }

    @Override
    public Translation translate(GgufFile g) {
        GgufArray a = (GgufArray) g.kv(KEY).value();
        StringBuilder encoded = new StringBuilder(a.size());
        for (Object o : a.values()) {
            String s = (String) o;
            if (s.length() != 1) {
                throw new FormatException(KEY + " holds an entry of " + s.length() + " characters, not one base64 digit");
            }
            encoded.append(s);
        }
        int end = encoded.indexOf("=");
        byte[] bytes;
        try {   // decode_base64 stops at the first '=' and accepts what precedes it
            bytes = Base64.getDecoder().decode(pad(end < 0 ? encoded.toString() : encoded.substring(0, end)));
        } catch (IllegalArgumentException e) {
            throw new FormatException(KEY + " is not base64: " + e.getMessage());
        }
        if (bytes.length == 0) {
            throw new FormatException(KEY + " decodes to nothing");
        }
        List<Object> values = new ArrayList<>(bytes.length);
        for (byte b : bytes) {
            values.add(b);
        }
        HeaderEdit e = new HeaderEdit(g);
        e.set(KEY, GgufValueType.ARRAY, new GgufArray(GgufValueType.UINT8, values));
        return e.build(name(), face());
    }

    /** Drops a dangling last digit (fewer than 8 bits, which {@code decode_base64} ignores) and pads to a multiple of 4. */
    private static String pad(String s) {
        String t = s.length() % 4 == 1 ? s.substring(0, s.length() - 1) : s;
        return t + "=".repeat((4 - t.length() % 4) % 4);
    }
}
