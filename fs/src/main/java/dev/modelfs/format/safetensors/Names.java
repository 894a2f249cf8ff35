package dev.modelfs.format.safetensors;

import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Helpers for tensor names in messages and headers; stateless. */
final class Names {
    private static final int MAX_QUOTED = 80;

    private Names() {
    }

    /**
     * A short, single-line, quoted rendering of a (possibly hostile) name for an error message:
     * control characters escaped, long names cut to {@value #MAX_QUOTED} characters.
     */
    static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder(Math.min(s.length(), MAX_QUOTED) + 8).append('"');
        int n = Math.min(s.length(), MAX_QUOTED);
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f || c == '"' || c == '\\' || c == 0x2028 || c == 0x2029) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        b.append('"');
        if (s.length() > MAX_QUOTED) {
            b.append("...(").append(s.length()).append(" chars)");
        }
        return b.toString();
    }

    /** True if {@code s} is well-formed UTF-16 (no unpaired surrogates), i.e. encodable as UTF-8. */
    static boolean isWellFormed(String s) {
        try {
            StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(s));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    /** Compares by Unicode code points, which is the bytewise order of the UTF-8 encodings. */
    static int compareUtf8(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    }
}
