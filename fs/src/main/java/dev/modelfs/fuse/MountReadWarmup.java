package dev.modelfs.fuse;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;

/**
 * The second half of a fresh mount's warm-up (after {@code KernelWarmup}'s kernels): reads the start of a
 * few files through the mount itself, in many small requests, so that the FUSE read path (the
 * {@code read_buf} upcall, {@code OpenedSource}, the chunk cache, read-ahead) has run often enough to be
 * compiled before a user's first read. The files are {@code KernelWarmup.filesToRead}'s: for each
 * conversion kernel the largest file that runs it, and the largest file without conversions.
 *
 * <p>Invariants: reads only, with {@code O_DIRECT} (4 KiB requests cycling over the first
 * {@value #REGION} bytes, {@code requestsPerFile} of them), so the kernel caches no page of the mount (a
 * user's first read still asks modelfs); converted chunks it reads (the first chunk, and the chunks
 * read-ahead converts after it: 1 + 2 x cores MiB per converted file) enter the chunk cache as any
 * reader's do (the same bytes); it stops at the next request once
 * {@code stop} says so; a failure ends it with a fine-level log line.
 */
final class MountReadWarmup {
    private static final Logger LOG = Logger.getLogger(MountReadWarmup.class.getName());
    private static final int REQUEST = 4 << 10;
    private static final long REGION = 1 << 20;

    private MountReadWarmup() {}

    /** Reads the chosen files; returns how many it read. */
    static int run(Path mountpoint, Collection<Path> files, int requestsPerFile, BooleanSupplier stop) {
        ByteBuffer buf = ByteBuffer.allocateDirect(REQUEST + 4096).alignedSlice(4096).limit(REQUEST);
        int read = 0;
        for (Path rel : files) {
            if (stop.getAsBoolean()) {
                break;
            }
            try (FileChannel ch = FileChannel.open(mountpoint.resolve(rel), StandardOpenOption.READ, ExtendedOpenOption.DIRECT)) {
                long region = Math.max(REQUEST, Math.min(REGION, ch.size()) / REQUEST * REQUEST);
                for (int i = 0; i < requestsPerFile && !stop.getAsBoolean(); i++) {
                    buf.clear();
                    if (ch.read(buf, (long) i * REQUEST % region) <= 0) {
                        break;
                    }
                }
                read++;
            } catch (IOException | RuntimeException e) {
                LOG.fine("read warm-up stops at " + rel + ": " + e);
                break;
            }
        }
        return read;
    }
}
