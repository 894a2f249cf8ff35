package dev.modelfs.format.safetensors;

import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Helpers for tensor names in messages and headers; stateless. */
final class Names {

    private Names() {
    }

    /** Short, single-line, quoted rendering of a possibly hostile string for a message. */
    static String quote(String s) {
        return dev.modelfs.format.Quoting.quote(s);
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
