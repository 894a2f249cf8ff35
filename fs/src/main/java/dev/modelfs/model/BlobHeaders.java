package dev.modelfs.model;

import dev.modelfs.cache.BlobSizeMismatchException;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufReader;
import dev.modelfs.format.safetensors.SafetensorsHeader;
import dev.modelfs.format.safetensors.SafetensorsParser;
import dev.modelfs.store.Digest;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.Function;

/**
 * Parses blob headers (safetensors, GGUF) through a short-lived mapping: only the header pages are
 * touched, and the size is checked against the manifest first.
 *
 * <p>Invariant: nothing stays mapped or open after a call returns; a missing blob is a
 * {@link NoSuchFileException}, a blob of another size a size-mismatch {@link IOException}, a header
 * that does not parse a {@link dev.modelfs.format.FormatException}.
 */
public final class BlobHeaders {
    private final OllamaStore store;

    public BlobHeaders(OllamaStore store) {
        this.store = store;
    }

    public SafetensorsHeader safetensors(Digest d, long size) throws IOException {
        return parse(d, size, SafetensorsParser::parse);
    }

    public GgufFile gguf(Digest d, long size) throws IOException {
        return parse(d, size, GgufReader::read);
    }

    private <T> T parse(Digest d, long size, Function<MemorySegment, T> parser) throws IOException {
        Path p = store.blobPath(d).orElseThrow(() -> new NoSuchFileException(d.fileName(), null, "blob missing"));
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ); Arena arena = Arena.ofConfined()) {
            long actual = ch.size();
            if (actual != size) {
                throw new BlobSizeMismatchException(p, size, actual);
            }
            MemorySegment seg = actual == 0 ? MemorySegment.ofArray(new byte[0]) : ch.map(FileChannel.MapMode.READ_ONLY, 0, actual, arena);
            try {
                return parser.apply(seg);
            } catch (InternalError e) {
                throw new IOException(d.shortId() + ": blob became unreadable while parsing its header", e);
            }
        }
    }
}
