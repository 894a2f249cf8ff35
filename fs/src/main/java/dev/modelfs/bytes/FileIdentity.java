package dev.modelfs.bytes;

import dev.modelfs.telemetry.FileKind;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The name of a whole converted file in the on-disk cache's complete files (docs/FORMATS.md §11): the SHA-256, in 64
 * lower-case hex digits, of the format {@value #FORMAT} and, segment by segment, what the bytes are: a literal's
 * length and bytes, a run of zeros' length, a blob slice's digest, blob size, offset and length, converted data's
 * persistent chunk name ({@link ConvertedData#persistentName}, itself a hash of its identity, length and chunk size)
 * and length.
 *
 * <p>Invariants: equal names mean equal bytes in every process (each part is a complete description of its bytes);
 * a file with no converted segment, or with converted data that has no identity (reordered rows, shifted vectors,
 * re-packed rows, rebuilt JSON), has no name ({@code null}) and is never kept whole.
 */
public final class FileIdentity {
    /** Bumped whenever the layout of complete files or the hashed text changes. */
    static final String FORMAT = "modelfs-files-1";

    private FileIdentity() {}

    /** The complete file name of {@code source}, or null when it has none. */
    public static String nameOf(ByteSource source) {
        if (source.kind() != FileKind.CONVERTED) {
            return null;
        }
        MessageDigest md = sha256();
        text(md, FORMAT + "\n" + source.size() + "\n");
        for (int i = 0; i < source.segmentCount(); i++) {
            switch (source.segment(i)) {
                case Segment.Literal l -> {
                    text(md, "L " + l.bytes().length + "\n");
                    md.update(l.bytes());
                }
                case Segment.Zeros z -> text(md, "Z " + z.length() + "\n");
                case Segment.BlobSlice b -> text(md, "B " + b.blob().digest().hex() + " " + b.blob().expectedSize() + " "
                        + b.offset() + " " + b.length() + "\n");
                case Segment.Converted c -> {
                    String chunk0 = c.data().persistentName(0);
                    if (chunk0 == null) {
                        return null;
                    }
                    text(md, "C " + chunk0 + " " + c.data().length() + "\n");
                }
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    private static void text(MessageDigest md, String s) {
        md.update(s.getBytes(StandardCharsets.UTF_8));
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }
}
