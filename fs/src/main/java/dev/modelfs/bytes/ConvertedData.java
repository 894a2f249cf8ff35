package dev.modelfs.bytes;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bytes computed from blob bytes (a dequantized or cast tensor), cut into fixed-size chunks so a
 * read computes only the chunks its range touches.
 *
 * <p>Invariants: {@link #length()} and {@link #chunkBytes()} are fixed; every chunk but the last is
 * exactly {@code chunkBytes()} long; {@link #compute} is deterministic and depends only on the
 * blobs named by {@link #blobs()}; {@link #id()} is unique in the process (it keys the chunk cache).
 * {@link #identity()}, when not null, says completely what the bytes are computed from (blob digests,
 * byte ranges, kernel, output type) and is the same in every process: two instances with equal
 * identities compute equal bytes, so it names their chunks in the on-disk chunk cache
 * ({@link #persistentName(long)}).
 */
public abstract class ConvertedData {
    /** Target output bytes per chunk: the one chunk size of converted data (and of read-ahead windows). */
    public static final long CHUNK_TARGET = 1 << 20;

    private static final AtomicLong IDS = new AtomicLong();

    /** Bumped whenever a conversion's bytes change, so an on-disk cache of older bytes is never hit. */
    private static final String DISK_FORMAT = "modelfs-chunks-1";
    /**
     * The stamp of this build ({@code build.properties}, filled in by Maven), also in every chunk name: the cache
     * directory is on by default, so a user who upgrades modelfs must never be served chunks an older build computed,
     * whether or not {@link #DISK_FORMAT} was bumped. {@code "unbuilt"} when the classes run without the resource.
     */
    static final String BUILD = buildStamp();

    private final long id = IDS.incrementAndGet();
    private volatile String persistentKey;

    public final long id() {
        return id;
    }

    /** Total output bytes. */
    public abstract long length();

    /** Output bytes per chunk (the last chunk may be shorter). */
    public abstract long chunkBytes();

    /** The blobs the data is computed from. */
    public abstract List<BlobRef> blobs();

    /** Length of chunk {@code chunk}. */
    public final long chunkLength(long chunk) {
        return Math.min(chunkBytes(), length() - chunk * chunkBytes());
    }

    /**
     * Computes chunk {@code chunk} into {@code out} (exactly {@link #chunkLength} bytes).
     *
     * @param blobs the mapped bytes of each of {@link #blobs()}, in the same order
     */
    public abstract void compute(long chunk, List<MemorySegment> blobs, MemorySegment out);

    /**
     * Heap this data builds from store bytes to compute a chunk and that does not grow with the chunk cache (a
     * rebuilt file's whole content): charged to the model's memory budget when its file is placed. 0 for data
     * computed chunk by chunk.
     */
    public long builtBytes() {
        return 0;
    }

    /** A short human description for {@code user.modelfs.source}. */
    public abstract String describe();

    /**
     * What the bytes are computed from and how, stable across processes and mounts, or null when this data
     * has no such description (its chunks then never go to the disk cache).
     */
    protected String identity() {
        return null;
    }

    /**
     * The kernel this data's chunks run through (e.g. {@code "GGML Q8_0 dequantizer -> BF16"}), or null for data
     * that runs no conversion kernel (a rebuilt JSON file, a shifted vector): the warm-up converts a few chunks
     * of each distinct kernel a store uses.
     */
    public String kernel() {
        return null;
    }

    /**
     * The name of chunk {@code chunk} in the on-disk chunk cache ({@code [0-9a-f]+-chunk}: a SHA-256 of the
     * cache format, the build's stamp ({@link #BUILD}), {@link #identity()}, the length and the chunk size), or null when {@link #identity()} is.
     */
    public final String persistentName(long chunk) {
        String key = persistentKey;
        if (key == null) {
            String identity = identity();
            if (identity == null) {
                return null;
            }
            key = sha256(DISK_FORMAT + " " + BUILD + "\n" + identity + "\n" + length() + " " + chunkBytes()).substring(0, 48);
            persistentKey = key;
        }
        return key + "-" + chunk;
    }

    private static String buildStamp() {
        try (java.io.InputStream in = ConvertedData.class.getResourceAsStream("build.properties")) {
            if (in == null) {
                return "unbuilt";
            }
            java.util.Properties p = new java.util.Properties();
            p.load(in);
            return p.getProperty("build", "unbuilt");
        } catch (java.io.IOException e) {
            return "unbuilt";
        }
    }

    private static String sha256(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }
}
