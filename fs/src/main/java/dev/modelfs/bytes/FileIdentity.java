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
 * a file with converted data that has no identity (reordered rows, shifted vectors, re-packed rows, rebuilt JSON) has
 * no name ({@code null}) and is never kept whole; of the files with no converted segment only a reassembled GGUF (a
 * header modelfs wrote, starting with the GGUF magic, and blob ranges: a translated GGUF of Ollama's dialect, a
 * synthesized GGUF whose tensors are all stored as llama.cpp reads them) has a name: llama.cpp maps it, and a map
 * through FUSE loads at 0.90-0.92 of a local file where a whole file by kernel passthrough loads as fast (BENCHMARKS.md
 * "Whole tools"); every other one (a blob, a reassembled safetensors file, bytes modelfs wrote) has none.
 */
public final class FileIdentity {
    /** Bumped whenever the layout of complete files or the hashed text changes. */
    static final String FORMAT = "modelfs-files-1";

    private FileIdentity() {}

    /** The complete file name of {@code source}, or null when it has none. */
    public static String nameOf(ByteSource source) {
        if (source.kind() != FileKind.CONVERTED && !(source.kind() == FileKind.REASSEMBLED && isGguf(source))) {
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

    /** Whether {@code source} starts with a header modelfs wrote that begins with the GGUF magic. */
    private static boolean isGguf(ByteSource source) {
        return source.segmentCount() > 0 && source.segment(0) instanceof Segment.Literal l && l.bytes().length >= 4
                && l.bytes()[0] == 'G' && l.bytes()[1] == 'G' && l.bytes()[2] == 'U' && l.bytes()[3] == 'F';
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
