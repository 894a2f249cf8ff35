package dev.modelfs.model;

import dev.modelfs.cache.BlobSizeMismatchException;
import dev.modelfs.cache.MappedPages;
import dev.modelfs.cache.NativeFile;
import dev.modelfs.cache.TruncatedMapping;
import dev.modelfs.format.HeapCharge;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufReader;
import dev.modelfs.format.safetensors.SafetensorsHeader;
import dev.modelfs.format.safetensors.SafetensorsParser;
import dev.modelfs.store.Digest;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.NoSuchFileException;
import java.util.function.Function;

/**
 * Parses blob headers (safetensors, GGUF) through a short-lived mapping: only the header pages are
 * touched, and the size is checked against the manifest first.
 *
 * <p>Invariant: nothing stays mapped or open after a call returns; blobs are opened only through
 * {@link OllamaStore#openBlob} (the trusted open); a missing blob is a
 * {@link NoSuchFileException}, a blob of another size a size-mismatch {@link IOException}, a header
 * that does not parse a {@link dev.modelfs.format.FormatException}.
 */
public final class BlobHeaders {
    private final OllamaStore store;

    public BlobHeaders(OllamaStore store) {
        this.store = store;
    }

    public SafetensorsHeader safetensors(Digest d, long size) throws IOException {
        return parse(d, size, seg -> {
            if (seg.byteSize() >= 8) {                     // the rest of the header its first 8 bytes announce, from native code
                MappedPages.populate(seg, FIRST_PAGES, 8 + Math.max(0, Math.min(seg.get(LE_LONG, 0), seg.byteSize())));
            }
            return SafetensorsParser.parse(seg);
        });
    }

    public GgufFile gguf(Digest d, long size) throws IOException {
        return gguf(d, size, HeapCharge.NONE);
    }

    /** The GGUF header, its metadata charged to {@code charge} as it is parsed ({@link GgufReader#read(MemorySegment, HeapCharge)}). */
    public GgufFile gguf(Digest d, long size, HeapCharge charge) throws IOException {
        return parse(d, size, seg -> {
            // past what parse() brought in, then a few MiB ahead of the parse whenever it gets there
            MappedPages.populate(seg, FIRST_PAGES, GGUF_HEADER_PAGES);
            return GgufReader.read(seg, charge, end -> MappedPages.populate(seg, GGUF_HEADER_PAGES, end), GGUF_HEADER_PAGES);
        });
    }

    /**
     * The tensor count a GGUF header claims (a v2/v3 header's u64 at offset 8), read without parsing
     * anything else; 0 when the blob is too short or not a GGUF (its parse then fails on its own).
     */
    public long ggufTensorCount(Digest d, long size) throws IOException {
        return parse(d, size, seg -> seg.byteSize() >= 24 && seg.get(LE_INT, 0) == GGUF_MAGIC
                ? Math.max(0, seg.get(LE_LONG, 8)) : 0L);
    }

    private static final java.lang.foreign.ValueLayout.OfInt LE_INT =
            java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
    private static final java.lang.foreign.ValueLayout.OfLong LE_LONG =
            java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
    /** {@code "GGUF"} read as a little-endian int. */
    private static final int GGUF_MAGIC = 0x46554747;

    /**
     * What of a blob is brought in from native code before its header is parsed from the mapping ({@link MappedPages}:
     * a page the store's disk is slow to deliver then holds this thread alone, never the JVM's safepoints): the first
     * 64 KiB of every blob (what the kernel's read-ahead reads anyway), a safetensors header as long as its first 8
     * bytes say, and 8 MiB of a GGUF blob, which holds the header of a real model (a vocabulary of 262,144 tokens and
     * its merges); a header past that is brought in a few MiB at a time as the parse reaches it
     * ({@link GgufReader#read(MemorySegment, HeapCharge, java.util.function.LongConsumer, long)}).
     */
    private static final long FIRST_PAGES = 64L << 10, GGUF_HEADER_PAGES = 8L << 20;

        private <T> T parse(Digest d, long size, Function<MemorySegment, T> parser) throws IOException {
        try (NativeFile f = store.openBlob(d); Arena arena = Arena.ofConfined()) {
            long actual = f.stat().size();
            if (actual != size) {
                throw new BlobSizeMismatchException(f.path(), size, actual);
            }
            MemorySegment seg = actual == 0 ? MemorySegment.ofArray(new byte[0]) : f.map(actual, arena);
            MappedPages.populate(seg, 0, FIRST_PAGES);    // from native code: a stalled disk holds this thread alone
            try {
                return parser.apply(seg);
            } catch (InternalError e) {
                throw TruncatedMapping.of(d.shortId() + " while parsing its header", e);
            }
        }
    }
}
