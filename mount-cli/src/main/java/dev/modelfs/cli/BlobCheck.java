package dev.modelfs.cli;

import dev.modelfs.cache.NativeFile;
import dev.modelfs.cache.UntrustedFileException;
import dev.modelfs.store.Digest;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.NoSuchFileException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Hashes blobs of a store in parallel and says, for each digest, whether the file holds exactly the
 * bytes the digest names. Blobs are opened through the store's trusted open ({@link OllamaStore#openBlob}),
 * so a blob modelfs would refuse to serve is reported as refused, never read.
 *
 * <p>Invariants: each distinct digest is read once, in 1 MiB pieces (memory use does not grow with
 * blob size); {@link #bytesDone()} grows monotonically up to the sum of the sizes read.
 */
final class BlobCheck {
    /** What one blob file turned out to be. */
    enum State { INTACT, MISSING, CORRUPT, REFUSED, ERROR }

    /** The verdict on one digest: its state, the file's size (-1 if unknown) and one line of detail. */
    record Result(Digest digest, State state, long size, String detail) {}

    private static final int PIECE = 1 << 20;

    private final OllamaStore store;
    private final int threads;
    private final AtomicLong bytesDone = new AtomicLong();

    BlobCheck(OllamaStore store, int threads) {
        this.store = store;
        this.threads = Math.max(1, threads);
    }

    /** Bytes hashed so far, across all threads (for a progress bar). */
    long bytesDone() {
        return bytesDone.get();
    }

    /** Checks every digest (each once) and returns the results in the order given. */
    Map<Digest, Result> check(Collection<Digest> digests) throws InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "modelfs-verify");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<Result>> futures = new ArrayList<>();
            for (Digest d : new java.util.LinkedHashSet<>(digests)) {   // each distinct digest once
                futures.add(pool.submit(() -> check(d)));
            }
            Map<Digest, Result> out = new LinkedHashMap<>();
            for (Future<Result> f : futures) {
                try {
                    Result r = f.get();
                    out.put(r.digest(), r);
                } catch (ExecutionException e) {
                    throw new IllegalStateException("verify: " + e.getCause(), e.getCause());
                }
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    /** Checks one blob: never throws for anything the file system answers. */
    Result check(Digest d) {
        try (NativeFile f = store.openBlob(d); Arena arena = Arena.ofConfined()) {
            long size = f.stat().size();
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            MemorySegment buf = arena.allocate(PIECE);
            long pos = 0;
            while (true) {
                long n = f.pread(buf, 0, PIECE, pos);
                if (n == 0) {
                    break;
                }
                sha.update(buf.asSlice(0, n).asByteBuffer());
                pos += n;
                bytesDone.addAndGet(n);
            }
            String got = HexFormat.of().formatHex(sha.digest());
            if (!got.equalsIgnoreCase(d.hex())) {
                return new Result(d, State.CORRUPT, pos, "content hashes to sha256:" + got);
            }
            return new Result(d, State.INTACT, pos, "");
        } catch (NoSuchFileException e) {
            return new Result(d, State.MISSING, -1, e.getReason() == null ? "no such file" : e.getReason());
        } catch (UntrustedFileException e) {
            return new Result(d, State.REFUSED, -1, e.getMessage());
        } catch (IOException e) {
            return new Result(d, State.ERROR, -1, String.valueOf(e.getMessage()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from this JDK", e);
        }
    }
}
