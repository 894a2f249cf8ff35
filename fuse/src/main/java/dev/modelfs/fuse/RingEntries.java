package dev.modelfs.fuse;

import java.io.IOException;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;

import dev.modelfs.read.OpenedSource;

/**
 * One ring thread's entries ({@link FuseRing}) and how their requests are answered: entry {@code e} is a
 * {@code fuse_uring_req_header} of {@value FuseRing#HEADER_BYTES} bytes in {@link #headers()} and a payload buffer,
 * which the kernel copies a request into and its reply out of. A {@code READ} is answered here, into the entry's
 * payload ({@link OpenedSource#read}); every other request is rebuilt as the contiguous message libfuse expects
 * ({@code fuse_in_header}, the opcode's header from {@code op_in}, the payload) and processed by libfuse with this
 * object's channel, whose {@code send} puts the reply into the entry (an OPEN reply rewritten for kernel passthrough,
 * {@link PassthroughChannels#rewriteOpen}).
 *
 * <p>Invariants: {@link #serve} leaves a complete reply in the entry (the answer, or an errno) and never throws for a
 * failure of the read or of libfuse; it allocates nothing for a {@code READ}; one thread uses an instance. The same
 * code serves the warm-up's synthetic reads ({@link #warmRead}), so that a fresh mount's first ring requests do not
 * run interpreted.
 */
final class RingEntries {
    private static final Logger LOG = Logger.getLogger(RingEntries.class.getName());
    private static final Linker LINKER = Linker.nativeLinker();
    private static final AddressLayout ADDR = ValueLayout.ADDRESS;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;
    private static final long HEADER_BYTES = FuseRing.HEADER_BYTES;
    private static final long OP_IN = FuseRing.OP_IN;
    private static final long OP_IN_BYTES = FuseRing.OP_IN_BYTES;
    private static final long ENT_PAYLOAD_SZ = FuseRing.ENT_PAYLOAD_SZ;
    private static final long ENT_COMMIT_ID = FuseRing.ENT_COMMIT_ID;
    private static final int OPCODE_READ = 15;
    /** {@code fuse_read_in} in op_in: fh, offset, size. */
    private static final long READ_FH = OP_IN;
    private static final long READ_OFFSET = OP_IN + 8;
    private static final long READ_SIZE = OP_IN + 16;
    private static final long IN_HEADER = PassthroughProtocol.IN_HEADER;
    private static final long OUT_HEADER = PassthroughProtocol.OUT_HEADER;
    private static final int EIO = 5;
    private static final int EBADF = 9;

    private static final MethodHandle PROCESS;
    private static final MethodHandle CHAN_NEW;
    private static final MethodHandle CHAN_DESTROY;

    static {
        SymbolLookup fuse = SymbolLookup.libraryLookup("libfuse.so.2", Arena.global());
        PROCESS = LINKER.downcallHandle(fuse.find("fuse_session_process").orElseThrow(),
                FunctionDescriptor.ofVoid(ADDR, ADDR, LONG, ADDR));
        CHAN_NEW = LINKER.downcallHandle(fuse.find("fuse_chan_new").orElseThrow(),
                FunctionDescriptor.of(ADDR, ADDR, INT, LONG, ADDR));
        CHAN_DESTROY = LINKER.downcallHandle(fuse.find("fuse_chan_destroy").orElseThrow(), FunctionDescriptor.ofVoid(ADDR));
    }

    private final ModelFs fs;
    private final MemorySegment session;
    private final BooleanSupplier passthrough;
    private final MemorySegment headers;
    private final MemorySegment[] payloads;
    private final long payloadBytes;
    /** The message libfuse processes: the request rebuilt, then its reply gathered. */
    private final MemorySegment request;
    private final MemorySegment reply;
    /** libfuse's channel for the requests it processes, or NULL (a warm-up's entries, which see only READs). */
    private final MemorySegment channel;
    /** The entry whose request libfuse is processing, its opcode, and whether its reply came. */
    private int current;
    private int currentOpcode;
    private boolean replied;

    /**
     * {@code count} entries with payloads of {@code payloadBytes}, from {@code arena}, for the open files of {@code fs};
     * requests other than READ go to libfuse session {@code session} with a channel over device descriptor
     * {@code devFd} ({@code devFd < 0}: no channel, for a warm-up); {@code passthrough} says whether OPEN replies may
     * name backing files.
     *
     * @throws IOException when libfuse cannot make the channel
     */
    RingEntries(ModelFs fs, int count, long payloadBytes, MemorySegment session, int devFd, BooleanSupplier passthrough,
                Arena arena) throws IOException {
        this.fs = fs;
        this.session = session;
        this.passthrough = passthrough;
        this.payloadBytes = payloadBytes;
        this.headers = arena.allocate(HEADER_BYTES * count, 4096);
        this.payloads = new MemorySegment[count];
        for (int e = 0; e < count; e++) {
            payloads[e] = arena.allocate(payloadBytes, 4096);
        }
        this.request = arena.allocate(IN_HEADER + OP_IN_BYTES + payloadBytes, 4096);
        this.reply = arena.allocate(OUT_HEADER + payloadBytes, 4096);
        if (devFd < 0) {
            this.channel = MemorySegment.NULL;
            return;
        }
        try {
            MethodHandle send = MethodHandles.lookup().findVirtual(RingEntries.class, "send",
                    MethodType.methodType(int.class, MemorySegment.class, MemorySegment.class, long.class)).bindTo(this);
            MemorySegment ops = arena.allocate(ADDR, 3);       // struct fuse_chan_ops: receive, send, destroy
            ops.setAtIndex(ADDR, 1, LINKER.upcallStub(send, FunctionDescriptor.of(INT, ADDR, ADDR, LONG), arena));
            this.channel = (MemorySegment) CHAN_NEW.invokeExact(ops, devFd, IN_HEADER + OP_IN_BYTES + payloadBytes,
                    MemorySegment.NULL);
        } catch (Throwable t) {
            throw new IOException("fuse_chan_new: " + t, t);
        }
        if (channel.equals(MemorySegment.NULL)) {
            throw new IOException("fuse_chan_new failed");
        }
    }

    /**
     * One entry with a payload for the warm-up's largest read ({@code FuseReadWarmup}), no channel (a warm-up serves
     * READs only), from {@code arena}.
     */
    static RingEntries forWarmup(ModelFs fs, Arena arena) throws IOException {
        return new RingEntries(fs, 1, FuseReadWarmup.LARGE, MemorySegment.NULL, -1, () -> false, arena);
    }

    /** The entries' headers ({@value FuseRing#HEADER_BYTES} bytes each). */
    MemorySegment headers() {
        return headers;
    }

    /** Entry {@code e}'s payload buffer. */
    MemorySegment payload(int e) {
        return payloads[e];
    }

    /** The bytes of every payload buffer. */
    long payloadBytes() {
        return payloadBytes;
    }

    /** The commit id of the request in entry {@code e} (its {@code unique}). */
    long commitId(int e) {
        return headers.get(LONG, HEADER_BYTES * e + ENT_COMMIT_ID);
    }

    /** Destroys the channel (none for a warm-up's entries). */
    void release() {
        if (channel.equals(MemorySegment.NULL)) {
            return;
        }
        try {
            CHAN_DESTROY.invokeExact(channel);
        } catch (Throwable t) {
            LOG.fine("fuse_chan_destroy: " + t);
        }
    }

    /**
     * Serves a READ of {@code size} bytes at {@code offset} of open file {@code fh} in entry 0, as one from the kernel
     * would be (the warm-up, before mounting): the bytes read, or a negated errno.
     */
    long warmRead(long fh, long offset, int size) {
        headers.set(INT, PassthroughProtocol.IN_LEN, (int) (IN_HEADER + 40));
        headers.set(INT, PassthroughProtocol.IN_OPCODE, OPCODE_READ);
        headers.set(LONG, PassthroughProtocol.IN_UNIQUE, 2);
        headers.set(LONG, READ_FH, fh);
        headers.set(LONG, READ_OFFSET, offset);
        headers.set(INT, READ_SIZE, size);
        headers.set(INT, ENT_PAYLOAD_SZ, 0);
        serve(0);
        int error = headers.get(INT, PassthroughProtocol.OUT_ERROR);
        return error != 0 ? error : headers.get(INT, ENT_PAYLOAD_SZ);
    }

    /** Answers the request in entry {@code e}: its reply is in the entry when this returns. */
    void serve(int e) {
        long h = HEADER_BYTES * e;
        int opcode = headers.get(INT, h + PassthroughProtocol.IN_OPCODE);
        if (opcode != OPCODE_READ && process(e, h, opcode)) {
            fs.ringRequest();
            return;                                         // libfuse's reply is in place
        }
        long unique = headers.get(LONG, h + PassthroughProtocol.IN_UNIQUE);
        long length = opcode == OPCODE_READ ? read(e, h) : -EIO;
        int error = length < 0 ? (int) length : 0;
        length = Math.max(0, length);
        headers.set(INT, h + PassthroughProtocol.OUT_LEN, (int) (OUT_HEADER + length));
        headers.set(INT, h + PassthroughProtocol.OUT_ERROR, error);
        headers.set(LONG, h + PassthroughProtocol.OUT_UNIQUE, unique);
        headers.set(INT, h + ENT_PAYLOAD_SZ, (int) length);
        fs.ringRequest();
    }

    /** Puts an EIO reply to the request in entry {@code e} into the entry. */
    void fail(int e) {
        long h = HEADER_BYTES * e;
        headers.set(INT, h + PassthroughProtocol.OUT_LEN, (int) OUT_HEADER);
        headers.set(INT, h + PassthroughProtocol.OUT_ERROR, -EIO);
        headers.set(LONG, h + PassthroughProtocol.OUT_UNIQUE, headers.get(LONG, h + ENT_COMMIT_ID));
        headers.set(INT, h + ENT_PAYLOAD_SZ, 0);
    }

    /** A READ into entry {@code e}'s payload: the bytes read, or a negated errno. */
    private long read(int e, long h) {
        long fh = headers.get(LONG, h + READ_FH);
        long offset = headers.get(LONG, h + READ_OFFSET);
        long size = Math.min(Integer.toUnsignedLong(headers.get(INT, h + READ_SIZE)), payloadBytes);
        OpenedSource src = fs.openSource(fh);
        if (src == null) {
            return -EBADF;
        }
        long start = System.nanoTime();
        try {
            long n = src.read(offset, payloads[e], 0, size);
            fs.readDone(src, n, start);
            return n;
        } catch (Throwable t) {
            return fs.readFailed(fh, t);
        }
    }

    /**
     * Rebuilds the request of entry {@code e} and has libfuse process it: true when its reply was put in the entry,
     * false when none came or the request could not be rebuilt (the caller answers EIO).
     */
    private boolean process(int e, long h, int opcode) {
        long length = Integer.toUnsignedLong(headers.get(INT, h + PassthroughProtocol.IN_LEN));
        long payloadLength = Integer.toUnsignedLong(headers.get(INT, h + ENT_PAYLOAD_SZ));
        long opLength = length - IN_HEADER - payloadLength;
        if (opLength < 0 || opLength > OP_IN_BYTES || payloadLength > payloadBytes) {
            FuseRing.logOnce("a request of opcode " + opcode + " does not fit its entry (" + length + " bytes)");
            return false;
        }
        MemorySegment.copy(headers, h, request, 0, IN_HEADER);
        MemorySegment.copy(headers, h + OP_IN, request, IN_HEADER, opLength);
        MemorySegment.copy(payloads[e], 0, request, IN_HEADER + opLength, payloadLength);
        current = e;
        currentOpcode = opcode;
        replied = false;
        try {
            PROCESS.invokeExact(session, request, length, channel);
        } catch (Throwable t) {
            FuseRing.logOnce("libfuse failed on opcode " + opcode + ": " + t);
        }
        if (!replied) {
            FuseRing.logOnce("libfuse sent no reply to opcode " + opcode);
        }
        return replied;
    }

    /**
     * The channel's {@code int send(struct fuse_chan *ch, const struct iovec iov[], size_t count)}: puts libfuse's
     * reply into the current entry (header, then payload); never throws.
     */
    @SuppressWarnings("unused")
    int send(MemorySegment ch, MemorySegment iov, long count) {
        try {
            long length = PassthroughChannels.gather(iov, count, reply);
            if (length < OUT_HEADER) {
                return -EIO;
            }
            if (currentOpcode == PassthroughProtocol.OPCODE_OPEN && passthrough.getAsBoolean()) {
                PassthroughChannels.rewriteOpen(fs, reply, length);
            }
            long h = HEADER_BYTES * current;
            MemorySegment.copy(reply, 0, headers, h, OUT_HEADER);
            MemorySegment.copy(reply, OUT_HEADER, payloads[current], 0, length - OUT_HEADER);
            headers.set(INT, h + ENT_PAYLOAD_SZ, (int) (length - OUT_HEADER));
            replied = true;
            return 0;
        } catch (Throwable t) {
            return -EIO;
        }
    }
}
