package dev.modelfs.format.gguf;

import dev.modelfs.format.FormatException;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** UTF-8 conversions and message quoting for GGUF strings; stateless. */
final class GgufText {

    private GgufText() {
    }

    /** Strict decode: malformed UTF-8 is a {@link FormatException} naming {@code what}. */
    static String decodeStrict(byte[] b, String what) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b)).toString();
        } catch (CharacterCodingException e) {
            throw new FormatException(what + " is not valid UTF-8");
        }
    }

    /** Strict encode: unpaired surrogates are a {@link FormatException} naming {@code what}. */
    static byte[] encodeStrict(String s, String what) {
        try {
            ByteBuffer bb = StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(s));
            byte[] out = new byte[bb.remaining()];
            bb.get(out);
            return out;
        } catch (CharacterCodingException e) {
            throw new FormatException(what + " is not valid Unicode (unpaired surrogate)");
        }
    }

    /** Short, single-line, quoted rendering of a possibly hostile string for a message. */
    static String quote(String s) {
        return dev.modelfs.format.Quoting.quote(s);
    }
}
