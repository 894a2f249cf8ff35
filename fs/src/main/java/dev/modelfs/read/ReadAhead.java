package dev.modelfs.read;

import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.cache.ChunkCache;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * Read-ahead conversion: while a sequential reader of a converted file is served its current chunk, the
 * chunks after it (within {@link #windowBytes()} of file bytes, across tensors) are converted into the
 * {@link ChunkCache} on a pool of daemon threads, one per core. A reader that reaches a chunk still
 * being converted waits for that one conversion (the cache computes a key once).
 *
 * <p>Invariants: at most one pending task per chunk; the queue is bounded (a full queue drops requests:
 * the reader then converts the chunk itself); a task pins its {@link OpenedSource} (its blob leases stay
 * valid until the task ends); failures are left for the reader to meet and report; {@link #close()} stops
 * the pool and waits for running tasks.
 */
public final class ReadAhead implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ReadAhead.class.getName());

    /** No read-ahead: readers convert every chunk themselves. */
    public static final ReadAhead NONE = new ReadAhead(0, 0);

    private final ThreadPoolExecutor pool;
    private final long windowBytes;
    private final Set<ChunkCache.Key> pending = ConcurrentHashMap.newKeySet();

    /**
     * @param threads     conversion threads (0: none)
     * @param windowBytes how far past a sequential reader's position to convert ahead
     */
    public ReadAhead(int threads, long windowBytes) {
        this.windowBytes = threads == 0 ? 0 : windowBytes;
        if (threads == 0) {
            this.pool = null;
            return;
        }
        this.pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(256), r -> {
            Thread t = new Thread(r, "modelfs-readahead");
            t.setDaemon(true);
            return t;
        }, (r, executor) -> pending.remove(((Task) r).key));   // dropped: a later request may retry
        this.pool.allowCoreThreadTimeOut(true);
    }

    /** The default for this machine: one thread per core, two chunks per thread ahead. */
    public static ReadAhead forCores() {
        int cores = Runtime.getRuntime().availableProcessors();
        return new ReadAhead(cores, 2L * cores * ConvertedData.CHUNK_TARGET);
    }

    long windowBytes() {
        return windowBytes;
    }

    /** Asks for chunk {@code chunk} of {@code data}, read through {@code file}, to be converted soon. */
    void request(OpenedSource file, ConvertedData data, long chunk, ChunkCache chunks) {
        ChunkCache.Key key = new ChunkCache.Key(data.id(), chunk);
        if (chunks.contains(key) || !pending.add(key)) {
            return;
        }
        pool.execute(new Task(key, file, data, chunk));
    }

    /** One chunk to convert ahead. */
    private final class Task implements Runnable {
        final ChunkCache.Key key;
        final OpenedSource file;
        final ConvertedData data;
        final long chunk;

        Task(ChunkCache.Key key, OpenedSource file, ConvertedData data, long chunk) {
            this.key = key;
            this.file = file;
            this.data = data;
            this.chunk = chunk;
        }

        @Override
        public void run() {
            try {
                if (file.pin()) {
                    try {
                        file.convertAhead(data, chunk);
                    } finally {
                        file.unpin();
                    }
                }
            } catch (RuntimeException e) {
                LOG.fine("read-ahead of " + data.describe() + " chunk " + chunk + ": " + e);
            } finally {
                pending.remove(key);
            }
        }
    }

    @Override
    public void close() {
        if (pool != null) {
            pool.shutdownNow();
            try {
                pool.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
