package dev.modelfs.cache;

import java.nio.file.Files;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;

/**
 * The one background thread that writes converted chunks to a {@link DiskChunkStore}, with its bounded queue and
 * backlog (docs/DESIGN.md §2.7).
 *
 * <p>Invariants: a full queue never blocks a reader: the chunk's hold is let go at once and its name goes to a bounded
 * backlog ({@value DiskChunkStore#BACKLOG} entries; beyond that the write is skipped) that the writer works through
 * whenever its queue is empty, writing each chunk still missing on disk by its {@link DiskChunkStore.Later} (from the
 * memory cache, or by converting it once more; a reader converting faster than the disk takes chunks would otherwise
 * leave a quarter of a file unwritten for good: BENCHMARKS.md); {@link #close} finishes the queue, then writes what is
 * left of the backlog on the closing thread, all within {@value #CLOSE_MILLIS} ms, and drops the rest; every
 * {@link DiskChunkStore.Later#keep} that returned true is matched by exactly one {@link DiskChunkStore.Later#drop}.
 */
final class ChunkWriter {
    private static final Logger LOG = Logger.getLogger(ChunkWriter.class.getName());
    /** How long {@link #close} spends finishing the queued writes and then the backlog's, at most. */
    static final long CLOSE_MILLIS = 5_000;

    private final DiskChunkStore store;
    private final ThreadPoolExecutor writer;
    /** Chunks whose write found the queue full, in the order they came; the writer takes them when idle. */
    private final ArrayBlockingQueue<Entry> backlog = new ArrayBlockingQueue<>(DiskChunkStore.BACKLOG);
    private final LongAdder backfilled = new LongAdder();
    private final LongAdder skipped = new LongAdder();

    /** A writer into {@code store} with at most {@code queuedWrites} chunks waiting. */
    ChunkWriter(DiskChunkStore store, int queuedWrites) {
        this.store = store;
        this.writer = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(queuedWrites), r -> {
            Thread t = new Thread(r, "modelfs-chunk-writer");
            t.setDaemon(true);
            return t;
        }, (r, executor) -> ((Task) r).rejected());
        this.writer.allowCoreThreadTimeOut(true);
    }

    /** Queues {@code chunk} as {@code name} (see {@link DiskChunkStore#writeLater}). */
    void writeLater(String name, ChunkCache.Chunk chunk, DiskChunkStore.Later later) {
        if (writer.isShutdown() || !chunk.tryAcquire()) {
            skipped.increment();
            return;
        }
        writer.execute(new Write(name, chunk, later));
    }

    /** Chunks written from the backlog. */
    long backfilled() {
        return backfilled.sum();
    }

    /** Chunks never written: the backlog was full, the store closed, or making them again failed. */
    long skipped() {
        return skipped.sum();
    }

    /** Chunks waiting to be written: queued, being written, or in the backlog. */
    int pending() {
        return writer.getQueue().size() + writer.getActiveCount() + backlog.size();
    }

    /** Whether nothing is queued, being written or in the backlog. */
    boolean idle() {
        return writer.getActiveCount() == 0 && writer.getQueue().isEmpty() && backlog.isEmpty();
    }

    /** Stops the writer as {@link DiskChunkStore#close} says. */
    void close() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_MILLIS);
        writer.shutdown();
        try {
            if (writer.awaitTermination(CLOSE_MILLIS, TimeUnit.MILLISECONDS)) {
                for (Entry e; System.nanoTime() < deadline && (e = backlog.poll()) != null; ) {
                    new Backfill(e).writeOnce();
                }
            } else {
                writer.shutdownNow().forEach(r -> ((Task) r).rejected());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        dropBacklog();
    }

    /** Drops every backlog entry (the store is shut down). */
    private void dropBacklog() {
        for (Entry e = backlog.poll(); e != null; e = backlog.poll()) {
            skip(e);
        }
    }

    /** Work for the writer thread. */
    private sealed interface Task extends Runnable permits Write, Backfill {
        /** Not run: the queue was full or the store closed. */
        void rejected();
    }

    /** One queued write, holding its chunk. */
    private final class Write implements Task {
        private final String name;
        private final ChunkCache.Chunk chunk;
        private final DiskChunkStore.Later later;

        Write(String name, ChunkCache.Chunk chunk, DiskChunkStore.Later later) {
            this.name = name;
            this.chunk = chunk;
            this.later = later;
        }

        @Override
        public void run() {
            try {
                store.write(name, chunk.bytes());
            } finally {
                chunk.release();
            }
            backfillIfIdle();
        }

        @Override
        public void rejected() {
            chunk.release();
            if (later == null || writer.isShutdown() || !later.keep()) {
                skipped.increment();
                return;
            }
            Entry e = new Entry(name, later);
            if (!backlog.offer(e)) {
                skip(e);
            } else if (writer.isShutdown()) {
                dropBacklog();                            // closed meanwhile, perhaps after close() dropped the backlog
            }
        }
    }

    /** A chunk in the backlog: its name, and what writes it (kept). */
    private record Entry(String name, DiskChunkStore.Later later) {}

    /** Gives up on a kept entry: lets go of what it kept and counts it as skipped. */
    private void skip(Entry e) {
        e.later().drop();
        skipped.increment();
    }

    /** Writes one chunk of the backlog unless the file exists by now, then looks for the next. */
    private final class Backfill implements Task {
        private final Entry entry;

        Backfill(Entry entry) {
            this.entry = entry;
        }

        @Override
        public void run() {
            writeOnce();
            backfillIfIdle();
        }

        /** Writes the chunk unless its file exists by now, and lets go of what the entry kept. */
        void writeOnce() {
            try {
                if (!Files.exists(store.fileOf(entry.name()))) {
                    (entry.later().write() ? backfilled : skipped).increment();
                }
            } catch (RuntimeException e) {                 // the blob truncated meanwhile, the cache closed...
                skipped.increment();
                LOG.fine("chunk " + entry.name() + " not written from the backlog: " + e);
            } finally {
                entry.later().drop();
            }
        }

        @Override
        public void rejected() {
            if (writer.isShutdown() || !backlog.offer(entry)) {
                skip(entry);
            }
        }
    }

    /** On the writer thread after a task: when no write is queued, queues the backlog's next chunk. */
    private void backfillIfIdle() {
        if (writer.getQueue().isEmpty() && !writer.isShutdown()) {
            Entry next = backlog.poll();
            if (next != null) {
                writer.execute(new Backfill(next));
            }
        }
    }
}
