package dev.modelfs.serve;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.FileIdentity;
import dev.modelfs.bytes.Segment;
import dev.modelfs.cache.BlobMappings;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.cache.CompleteFiles;
import dev.modelfs.cache.DiskChunkStore;
import dev.modelfs.read.OpenedSource;
import dev.modelfs.read.ReadAhead;
import dev.modelfs.store.Digest;
import dev.modelfs.telemetry.Telemetry;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.logging.Logger;

/**
 * Converted once, then served as a local file (docs/DESIGN.md §2.7 "Complete files", SEMANTICS.md "The chunk cache
 * directory"): with {@code --cache-dir}, an open of a converted file whose complete file is on disk and intact is an
 * open of that file, one whole "blob" ({@link ByteSource} of one {@link Segment.BlobSlice}, kind passthrough), so the
 * FUSE mount hands it to the kernel's passthrough and NFS reads it with {@code pread} like a blob; the close of a
 * converted file served from chunks asks the {@link FileAssembler} for its complete file.
 *
 * <p>Invariants: a complete file is opened only through {@link CompleteFiles#open} (verified: never a torn or corrupt
 * file) and is {@link CompleteFiles#acquire acquired} from open to release (the size bound never removes it
 * meanwhile); its mapping and descriptor are let go when its last open file closes (no idle mapping keeps a trimmed
 * file's space); any failure to open it serves the file from chunks as before, with one log line; names are computed
 * once per file ({@link FileIdentity}), kept while the file's {@link ByteSource} lives.
 */
public final class CompleteFileServing implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(CompleteFileServing.class.getName());
    private static final String NONE = "";

    private final CompleteFiles files;
    private final FileAssembler assembler;
    private final BlobMappings mappings = new BlobMappings(0);
    private final Map<ByteSource, String> names = Collections.synchronizedMap(new WeakHashMap<>());

    /** Serves and assembles the complete files of {@code disk}, assembling from {@code resolver}'s blobs and {@code chunks}. */
    public CompleteFileServing(DiskChunkStore disk, BlobResolver resolver, ChunkCache chunks) {
        this.files = disk.completeFiles();
        this.assembler = new FileAssembler(disk, resolver, chunks);
    }

    /**
     * Opens {@code source} from its complete file, or returns null when it has none on disk, intact (the caller then
     * opens it as usual, {@link #assembleAfterClose}).
     */
    public OpenedSource open(ByteSource source, ChunkCache chunks, Telemetry telemetry) {
        String name = nameOf(source);
        if (name == null || !files.present(name)) {
            return null;
        }
        long size = source.size();
        files.acquire(name);
        try {
            BlobRef ref = new BlobRef(new Digest(name), size);
            BlobResolver complete = r -> mappings.acquire("complete-" + name, () -> files.open(name, size), size);
            return OpenedSource.open(ByteSource.of(new Segment.BlobSlice(ref, 0, size)), complete, chunks, ReadAhead.NONE,
                    telemetry, () -> files.release(name));
        } catch (NoSuchFileException e) {
            files.release(name);                // gone, being installed, or invalid (deleted and logged)
            return null;
        } catch (IOException | RuntimeException e) {
            files.release(name);
            LOG.warning("cannot open complete file " + files.fileOf(name) + ": " + e + " (served from chunks)");
            return null;
        }
    }

    /** What to run when {@code source}, opened from chunks, is closed: ask for its complete file. */
    public Runnable assembleAfterClose(ByteSource source) {
        return () -> {
            String name = nameOf(source);
            if (name != null && !files.present(name)) {
                assembler.offer(name, source);
            }
        };
    }

    /** Opens of complete files, complete files assembled and complete files rejected, for the last log line. */
    public String summary() {
        return files.served() + " files served from and " + files.assembled() + " assembled in the cache directory";
    }

    /** Whether the assembler has nothing to do (tests). */
    boolean idle() {
        return assembler.idle();
    }

    /** Whether complete file {@code name} is on disk (not verified: opening it does that). */
    boolean present(String name) {
        return files.present(name);
    }

    /** The complete file name of {@code source}, computed once per source; null when it has none. */
    String nameOf(ByteSource source) {
        String n = names.get(source);
        if (n == null) {
            n = FileIdentity.nameOf(source);
            names.put(source, n == null ? NONE : n);
        }
        return n == null || n.isEmpty() ? null : n;
    }

    @Override
    public void close() {
        assembler.close();
        mappings.close();
    }
}
