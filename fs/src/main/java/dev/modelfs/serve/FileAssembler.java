package dev.modelfs.serve;

import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.bytes.Segment;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.cache.CompleteFiles;
import dev.modelfs.cache.DiskChunkStore;
import dev.modelfs.read.OpenedSource;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;
import java.util.logging.Logger;

/**
 * Assembles complete converted files in a {@code --cache-dir} (docs/DESIGN.md §2.7 "Complete files"), on one
 * background thread ({@code modelfs-file-assembler}): a converted file that was closed is written whole once every
 * one of its converted chunks is on disk, segment by segment: converted data from its verified chunk files
 * ({@link DiskChunkStore#copy}, past the memory chunk cache, which it neither fills nor counts, and not a use of the
 * chunk), everything else through a fresh open of the file (headers, padding, blob ranges by {@code pread}), 1 MiB at
 * a time. Nothing is converted: a chunk file gone or invalid meanwhile abandons the file. Once the file is installed
 * its chunks are {@link DiskChunkStore#demote demoted} (but those of files still waiting to be assembled): the size
 * bound trims them before anything in use.
 *
 * <p>Invariants: one file is assembled at a time, through one native buffer of {@value #BUFFER} bytes allocated once
 * (no file's bytes on the heap); at most {@value #QUEUE} files wait, each once (further offers are dropped: the next
 * close offers it again); a file is assembled only when its complete file is absent and all its chunk files are on
 * disk: while some are not, it waits for them as long as the chunk writer has anything queued, being written or in
 * its backlog (a large file's last chunks may reach the disk minutes after its close: BENCHMARKS.md "stop 39"),
 * looking every {@value #POLL_MILLIS} ms, and gives up when a chunk is still missing after the writer had nothing
 * left to write, or, with the writer still busy, once the first missing chunk has not reached the disk for {@link #STALL}
 * or the wait has lasted {@link #LIMIT} in all (a writer kept busy by other files' chunks, or stalled on its disk, never holds
 * the assembler, and so the files queued behind this one, for ever: one log line, and a later close offers the file
 * again); {@link #close} stops after at most the current MiB or wait: a file being assembled then is abandoned
 * (its temporary deleted, nothing installed).
 */
final class FileAssembler implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(FileAssembler.class.getName());
    static final int QUEUE = 64;
    static final int BUFFER = 1 << 20;
    static final long POLL_MILLIS = 20;
    /** The longest wait for a file's first missing chunk (the wait goes on while chunks keep coming, within {@link #LIMIT}). */
    static final Duration STALL = Duration.ofSeconds(60);
    /** The longest wait for a file's chunks in all. */
    static final Duration LIMIT = Duration.ofMinutes(10);

    private record Job(String name, ByteSource source) {}

    private static final Job STOP = new Job(null, null);

    private final DiskChunkStore disk;
    private final CompleteFiles files;
    private final BlobResolver resolver;
    private final ChunkCache chunks;
    private final BlockingQueue<Job> queue = new ArrayBlockingQueue<>(QUEUE + 1);
    private final Set<String> waiting = ConcurrentHashMap.newKeySet();
    private final LongAdder incomplete = new LongAdder();
    private final Arena arena = Arena.ofShared();
    private final MemorySegment buffer = arena.allocate(BUFFER, 64);
    private final Thread thread;
    /** Chunks the chunk writer has queued, being written or in its backlog ({@link DiskChunkStore#pending}). */
    private final IntSupplier writerPending;
    private final long stallNanos;
    private final long limitNanos;
    private volatile boolean closing;

    FileAssembler(DiskChunkStore disk, BlobResolver resolver, ChunkCache chunks) {
        this(disk, resolver, chunks, disk::pending, STALL, LIMIT);
    }

    /**
     * As {@link #FileAssembler(DiskChunkStore, BlobResolver, ChunkCache)}, with the writer's pending count read from
     * {@code writerPending} and the wait for a file's chunks bounded by {@code stall} without progress and {@code limit}
     * in all (tests: a writer that never finishes).
     */
    FileAssembler(DiskChunkStore disk, BlobResolver resolver, ChunkCache chunks, IntSupplier writerPending, Duration stall,
                  Duration limit) {
        this.writerPending = writerPending;
        this.stallNanos = stall.toNanos();
        this.limitNanos = limit.toNanos();
        this.disk = disk;
        this.files = disk.completeFiles();
        this.resolver = resolver;
        this.chunks = chunks;
        this.thread = Thread.ofPlatform().name("modelfs-file-assembler").daemon().start(this::run);
    }

    /** Asks for complete file {@code name} of {@code source} (a converted file just closed); never blocks. */
    void offer(String name, ByteSource source) {
        if (!closing && waiting.add(name) && (waiting.size() > QUEUE || !queue.offer(new Job(name, source)))) {
            waiting.remove(name);
        }
    }

    /** Files not assembled because some of their chunks were not on disk. */
    long incomplete() {
        return incomplete.sum();
    }

    /** Whether no file waits or is being assembled (tests). */
    boolean idle() {
        return waiting.isEmpty();
    }

    private void run() {
        for (;;) {
            Job job;
            try {
                job = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            if (job == STOP) {
                return;
            }
            try {
                assemble(job);
            } catch (IOException | RuntimeException e) {
                LOG.warning("cannot assemble the complete file of " + job.name() + ": " + e);
            } finally {
                waiting.remove(job.name());
            }
        }
    }

    private void assemble(Job job) throws IOException {
        if (closing || files.present(job.name())) {
            return;
        }
        ByteSource source = job.source();
        List<String> chunkNames = chunkNames(source);
        if (chunkNames == null || !awaitChunks(job.name(), chunkNames)) {
            incomplete.increment();
            LOG.fine("complete file " + job.name() + " not assembled: a chunk of it is not on disk");
            return;
        }
        try (OpenedSource src = OpenedSource.open(source, resolver, chunks)) {
            files.assemble(job.name(), source.size(), sink -> {
                for (int i = 0; i < source.segmentCount(); i++) {
                    if (source.segment(i) instanceof Segment.Converted c) {
                        writeChunks(c.data(), sink);
                    } else {
                        writeRange(src, source.start(i), source.segment(i).length(), sink);
                    }
                }
            }, () -> demoteAllBut(chunkNames, job));
        }
    }

    /**
     * Demotes the chunks of {@code names} (an assembled file's) except those a file still waiting to be assembled needs
     * (views of one model share chunks: a variant and its Hugging Face folder's safetensors).
     */
    private void demoteAllBut(List<String> names, Job done) {
        Set<String> needed = new java.util.HashSet<>();
        for (Job j : queue.toArray(Job[]::new)) {
            if (j != STOP && j != done) {
                List<String> n = chunkNames(j.source());
                if (n != null) {
                    needed.addAll(n);
                }
            }
        }
        for (String n : names) {
            if (!needed.contains(n)) {
                disk.demote(n);
            }
        }
    }

    /**
     * Waits until every chunk of {@code names} (complete file {@code file}'s) is on disk (true), or one is still missing
     * after the chunk writer had nothing left to write, or after {@link #stallNanos} without the first missing chunk
     * reaching the disk, or {@link #limitNanos} in all (false; the last two are logged, one line).
     */
    private boolean awaitChunks(String file, List<String> names) throws InterruptedIOException {
        int next = 0;
        long start = System.nanoTime();
        long progress = start;
        for (;;) {
            boolean writerIdle = writerPending.getAsInt() == 0;   // read first: an idle writer will not bring the missing
            int before = next;
            while (next < names.size() && disk.contains(names.get(next))) {
                next++;
            }
            if (next == names.size()) {
                return true;
            }
            if (writerIdle) {
                return false;
            }
            long now = System.nanoTime();
            if (next > before) {
                progress = now;
            }
            if (now - progress >= stallNanos || now - start >= limitNanos) {
                LOG.warning("complete file " + file + " not assembled: chunk " + next + " of its " + names.size()
                        + " (and perhaps later ones) not on disk after " + Duration.ofNanos(now - start).toSeconds() + " s while the chunk writer"
                        + " stayed busy (waits at most " + Duration.ofNanos(stallNanos).toSeconds() + " s without progress, "
                        + Duration.ofNanos(limitNanos).toSeconds() + " s in all; a later close offers it again)");
                return false;
            }
            stopIfClosing();
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("stopping");
            }
        }
    }

    /** Writes every chunk of {@code d} from its chunk file. */
    private void writeChunks(ConvertedData d, CompleteFiles.Sink sink) throws IOException {
        for (long ch = 0; ch * d.chunkBytes() < d.length(); ch++) {
            stopIfClosing();
            long len = d.chunkLength(ch);
            if (len > BUFFER) {
                throw new IOException(d.describe() + ": chunks of " + len + " bytes are larger than the buffer");
            }
            MemorySegment slice = buffer.asSlice(0, len);
            if (!disk.copy(d.persistentName(ch), slice)) {
                throw new IOException(d.describe() + " chunk " + ch + " is no longer on disk");
            }
            sink.write(slice);
        }
    }

    /** Writes {@code length} bytes of {@code src} from {@code start} (no converted bytes among them). */
    private void writeRange(OpenedSource src, long start, long length, CompleteFiles.Sink sink) throws IOException {
        for (long pos = 0; pos < length; ) {
            stopIfClosing();
            long n = src.read(start + pos, buffer, 0, Math.min(BUFFER, length - pos));
            if (n <= 0) {
                throw new IOException("short read at " + (start + pos));
            }
            sink.write(buffer.asSlice(0, n));
            pos += n;
        }
    }

    private void stopIfClosing() throws InterruptedIOException {
        if (closing) {
            throw new InterruptedIOException("stopping");
        }
    }

    /** The names of every converted chunk of {@code source}, in file order; null when one has none. */
    private static List<String> chunkNames(ByteSource source) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < source.segmentCount(); i++) {
            if (source.segment(i) instanceof Segment.Converted c) {
                ConvertedData d = c.data();
                long count = (d.length() + d.chunkBytes() - 1) / d.chunkBytes();
                for (long ch = 0; ch < count; ch++) {
                    String name = d.persistentName(ch);
                    if (name == null) {
                        return null;
                    }
                    names.add(name);
                }
            }
        }
        return names;
    }

    /** Stops the thread (abandoning a file being assembled after its current MiB) and frees the buffer. */
    @Override
    public void close() {
        closing = true;
        queue.clear();
        queue.offer(STOP);
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!thread.isAlive()) {
            arena.close();
        }
    }
}
