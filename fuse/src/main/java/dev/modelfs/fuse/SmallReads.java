package dev.modelfs.fuse;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

import dev.modelfs.read.OpenedSource;

/**
 * One worker's answers to small FUSE {@code READ} requests (under {@value #MAX_BYTES} bytes, such as {@code O_DIRECT}
 * 4 KiB random reads), written to the device by this class instead of libfuse: the bytes go from
 * {@link OpenedSource#read} into this worker's reply buffer right behind the reply header, and one {@code write(2)}
 * answers the request. Libfuse's high-level read path costs a request allocation, a path lookup under its tree lock,
 * a native-to-Java upcall and two {@code malloc}/{@code free} pairs per request; here the request is decoded where the
 * worker received it, with nothing allocated (docs/DESIGN.md §2.6). Larger reads stay with libfuse, which splices
 * whole-blob ranges to the kernel without copying them through this process.
 *
 * <p>Invariants: {@link #serve} answers a request completely (its bytes, or an error reply with the errno
 * {@link ModelFs#readFailed(long, Throwable)} chose and logged) and returns true, or leaves it untouched for libfuse and
 * returns false; it allocates nothing; one instance per worker thread (the buffer is not shared). An interrupt the
 * kernel sends for a request answered here reaches libfuse, which finds no such request and, as for any request it
 * has already answered, answers the interrupt with {@code EAGAIN} when it next processes a request.
 */
final class SmallReads {
    private static final Logger LOG = Logger.getLogger(SmallReads.class.getName());
    /** Reads of this many bytes and more go to libfuse, which splices the ones within one blob. */
    static final int MAX_BYTES = 8192;
    static final int OPCODE_READ = 15;
    /** {@code fuse_read_in}, right after the request header: {@code fh}, {@code offset}, {@code size}. */
    private static final long READ_FH = PassthroughProtocol.IN_HEADER;
    private static final long READ_OFFSET = READ_FH + 8;
    private static final long READ_SIZE = READ_OFFSET + 8;
    private static final long READ_IN_MIN = READ_SIZE + 4;
    private static final long OUT_HEADER = PassthroughProtocol.OUT_HEADER;
    private static final int ENOENT = 2;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;

    /** How many failed writes were logged (at most 20: a device that refuses every reply cannot flood the log). */
    private static final AtomicInteger WRITE_FAILURES_LOGGED = new AtomicInteger();

    private final ModelFs fs;
    private final int fd;
    private final MemorySegment reply;
    private final MemorySegment state;

    /**
     * Answers on descriptor {@code fd} (the FUSE device) with buffers from {@code arena}, for the open files of {@code fs};
     * {@code fs} is null only where no {@code READ} ever arrives (the workers' warm-up loop, whose requests it declines).
     */
    SmallReads(ModelFs fs, int fd, Arena arena) {
        this.fs = fs;
        this.fd = fd;
        this.reply = arena.allocate(OUT_HEADER + MAX_BYTES, 4096);
        this.state = FuseDevice.callState(arena);
    }

    /**
     * Answers {@code request} ({@code length} bytes as received) when it is a {@code READ} of fewer than
     * {@value #MAX_BYTES} bytes of a file open here; false (nothing written) for anything else.
     */
    boolean serve(MemorySegment request, int length) {
        if (length < READ_IN_MIN || PassthroughProtocol.opcode(request) != OPCODE_READ) {
            return false;
        }
        int size = request.get(INT, READ_SIZE);
        long fh = request.get(LONG, READ_FH);
        if (size < 0 || size >= MAX_BYTES) {
            return false;
        }
        OpenedSource src = fs.openSource(fh);
        if (src == null) {
            return false;                                       // libfuse's path answers EBADF, and logs nothing here
        }
        long start = System.nanoTime();
        int error = 0;
        long served = 0;
        try {
            served = src.read(request.get(LONG, READ_OFFSET), reply, OUT_HEADER, size);
        } catch (Throwable t) {
            error = fs.readFailed(fh, t);
        }
        reply.set(INT, PassthroughProtocol.OUT_LEN, (int) (OUT_HEADER + served));
        reply.set(INT, PassthroughProtocol.OUT_ERROR, error);
        reply.set(LONG, PassthroughProtocol.OUT_UNIQUE, request.get(LONG, PassthroughProtocol.IN_UNIQUE));
        send(OUT_HEADER + served);
        if (error == 0) {
            fs.readDone(src, served, start);
        }
        return true;
    }

    /** Writes the reply; the kernel's ENOENT (the request was interrupted and is gone) needs nothing more. */
    private void send(long bytes) {
        int r = FuseDevice.write(fd, reply, bytes, state);
        if (r != 0 && r != -ENOENT && WRITE_FAILURES_LOGGED.getAndIncrement() < 20) {
            LOG.warning("FUSE read reply of " + bytes + " bytes: errno " + -r);
        }
    }
}
