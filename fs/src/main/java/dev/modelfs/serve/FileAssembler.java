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
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;

/**
 * Assembles complete converted files in a {@code --cache-dir} (docs/DESIGN.md §2.7 "Complete files"), on one
 * background thread ({@code modelfs-file-assembler}): a converted file that was closed is written whole once every
 * one of its converted chunks is on disk, segment by segment: converted data from its verified chunk files
 * ({@link DiskChunkStore#copy}, past the memory chunk cache, which it neither fills nor counts), everything else
 * through a fresh open of the file (headers, padding, blob ranges by {@code pread}), 1 MiB at a time. Nothing is
 * converted: a chunk file gone or invalid meanwhile abandons the file.
 *
 * <p>Invariants: one file is assembled at a time, through one native buffer of {@value #BUFFER} bytes allocated once
 * (no file's bytes on the heap); at most {@value #QUEUE} files wait, each once (further offers are dropped: the next
 * close offers it again); a file is assembled only when its complete file is absent and all its chunk files are on
 * disk once the chunk writer has finished its queue (waiting at most {@value #FLUSH_MILLIS} ms); {@link #close} stops
 * after at most the current MiB: a file being assembled then is abandoned (its temporary deleted, nothing installed).
 */
final class FileAssembler implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(FileAssembler.class.getName());
    static final int QUEUE = 64;
    static final int BUFFER = 1 << 20;
    static final long FLUSH_MILLIS = 10_000;

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
    private volatile boolean closing;

    FileAssembler(DiskChunkStore disk, BlobResolver resolver, ChunkCache chunks) {
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
        disk.flush(FLUSH_MILLIS);                               // this file's last chunks are usually still queued
        if (!allChunksOnDisk(job.source())) {
            incomplete.increment();
            return;
        }
        ByteSource source = job.source();
        try (OpenedSource src = OpenedSource.open(source, resolver, chunks)) {
            files.assemble(job.name(), source.size(), sink -> {
                for (int i = 0; i < source.segmentCount(); i++) {
                    if (source.segment(i) instanceof Segment.Converted c) {
                        writeChunks(c.data(), sink);
                    } else {
                        writeRange(src, source.start(i), source.segment(i).length(), sink);
                    }
                }
            });
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

    /** Whether every converted chunk of {@code source} has its file in the chunk directory now. */
    private boolean allChunksOnDisk(ByteSource source) {
        for (int i = 0; i < source.segmentCount(); i++) {
            if (source.segment(i) instanceof Segment.Converted c) {
                ConvertedData d = c.data();
                long count = (d.length() + d.chunkBytes() - 1) / d.chunkBytes();
                for (long ch = 0; ch < count; ch++) {
                    String name = d.persistentName(ch);
                    if (name == null || !disk.contains(name)) {
                        return false;
                    }
                }
            }
        }
        return true;
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
