package dev.modelfs.fuse;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The parts of the kernel's FUSE protocol ({@code <linux/fuse.h>}, 7.40 and later) that kernel passthrough and FUSE
 * over io_uring need and libfuse 2.9, which speaks 7.19, does not know: reading whether the kernel's {@code FUSE_INIT}
 * offers {@code FUSE_PASSTHROUGH} or {@code FUSE_OVER_IO_URING}, accepting them in libfuse's INIT reply, and turning a
 * successful OPEN reply into a passthrough open of a registered backing file. Offsets are those of the kernel's structures on a little-endian
 * LP64 machine; nothing here calls the kernel. The request and reply headers defined here are also those
 * {@link SmallReads} decodes and writes.
 *
 * <p>Invariants: each method reads or writes only within the length it is given, and leaves a message it does not
 * recognise (an error reply, a shorter or longer body) exactly as it was.
 */
final class PassthroughProtocol {
    private PassthroughProtocol() {}

    static final int OPCODE_OPEN = 14;
    static final int OPCODE_INIT = 26;
    /** {@code struct fuse_in_header}: len, opcode, unique, nodeid, uid, gid, pid, padding. */
    static final long IN_HEADER = 40;
    static final long IN_LEN = 0;
    static final long IN_OPCODE = 4;
    static final long IN_UNIQUE = 8;
    /** {@code struct fuse_out_header}: len, error, unique. */
    static final long OUT_HEADER = 16;
    static final long OUT_LEN = 0;
    static final long OUT_ERROR = 4;
    static final long OUT_UNIQUE = 8;
    /** {@code struct fuse_init_in}: major, minor, max_readahead, flags, flags2, ... */
    private static final long INIT_IN_MAJOR = 0;
    private static final long INIT_IN_FLAGS = 12;
    private static final long INIT_IN_FLAGS2 = 16;
    /** {@code struct fuse_init_out} of 7.40 and later: 64 bytes; libfuse 2.9 sends the first 24. */
    static final long INIT_OUT_SIZE = 64;
    private static final long INIT_OUT_MAJOR = 0;
    private static final long INIT_OUT_FLAGS = 12;
    private static final long INIT_OUT_FLAGS2 = 32;
    private static final long INIT_OUT_MAX_STACK_DEPTH = 36;
    /** {@code struct fuse_open_out}: fh, open_flags, backing_id. */
    static final long OPEN_OUT_SIZE = 16;
    private static final long OPEN_OUT_FH = 0;
    private static final long OPEN_OUT_FLAGS = 8;
    private static final long OPEN_OUT_BACKING_ID = 12;

    /** {@code FUSE_INIT_EXT}: the INIT message carries {@code flags2} (the upper 32 capability bits). */
    static final int INIT_EXT = 1 << 30;
    /** {@code FUSE_PASSTHROUGH} ({@code 1ULL << 37}) as a bit of {@code flags2}. */
    static final int FLAGS2_PASSTHROUGH = 1 << (37 - 32);
    /** {@code FUSE_OVER_IO_URING} ({@code 1ULL << 41}) as a bit of {@code flags2}: requests may come through io_uring. */
    static final int FLAGS2_OVER_IO_URING = 1 << (41 - 32);
    /** {@code FOPEN_PASSTHROUGH}: the open file's reads, splices and maps go to its backing file. */
    static final int FOPEN_PASSTHROUGH = 1 << 7;
    /**
     * The stack depth accepted: 1, libfuse 3's default. Backing files must then lie on a file system that is not
     * itself stacked (an overlayfs store is refused with ELOOP at registration, and served by this process instead),
     * while this mount can still be the lower layer of an overlayfs.
     */
    static final int MAX_STACK_DEPTH = 1;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;

    /** The opcode of request {@code request} (which holds at least a {@code fuse_in_header}). */
    static int opcode(MemorySegment request) {
        return request.get(INT, IN_OPCODE);
    }

    /** Whether INIT request {@code request} of {@code length} bytes offers {@code FUSE_PASSTHROUGH}. */
    static boolean offersPassthrough(MemorySegment request, long length) {
        return (offered(request, length) & FLAGS2_PASSTHROUGH) != 0;
    }

    /** Whether INIT request {@code request} of {@code length} bytes offers {@code FUSE_OVER_IO_URING}. */
    static boolean offersIoUring(MemorySegment request, long length) {
        return (offered(request, length) & FLAGS2_OVER_IO_URING) != 0;
    }

    /** The {@code flags2} of INIT request {@code request} of {@code length} bytes, or 0 when it carries none. */
    private static int offered(MemorySegment request, long length) {
        if (length < IN_HEADER + INIT_IN_FLAGS2 + 4 || opcode(request) != OPCODE_INIT
                || request.get(INT, IN_HEADER + INIT_IN_MAJOR) != 7
                || (request.get(INT, IN_HEADER + INIT_IN_FLAGS) & INIT_EXT) == 0) {
            return 0;
        }
        return request.get(INT, IN_HEADER + INIT_IN_FLAGS2);
    }

    /**
     * Accepts passthrough in INIT reply {@code reply} of {@code length} bytes: the body is zero-extended to the
     * 64 bytes of {@code fuse_init_out} (so {@code reply} must hold {@value #OUT_HEADER} + {@value #INIT_OUT_SIZE}
     * bytes), {@code FUSE_INIT_EXT} and {@code FUSE_PASSTHROUGH} are set and the stack depth is
     * {@value #MAX_STACK_DEPTH}. Returns the new length, or -1 (and changes nothing) when the reply is an error
     * or its body is not a protocol 7 {@code fuse_init_out} of at most 64 bytes.
     */
    static long acceptPassthrough(MemorySegment reply, long length) {
        return accept(reply, length, FLAGS2_PASSTHROUGH);
    }

    /**
     * Accepts the capabilities {@code flags2} (bits of {@link #FLAGS2_PASSTHROUGH} and {@link #FLAGS2_OVER_IO_URING})
     * in INIT reply {@code reply} of {@code length} bytes, as {@link #acceptPassthrough} does for passthrough alone
     * (the stack depth is set only with passthrough, the one capability that reads it).
     */
    static long accept(MemorySegment reply, long length, int flags2) {
        long body = length - OUT_HEADER;
        if (body < INIT_OUT_FLAGS + 4 || body > INIT_OUT_SIZE || reply.byteSize() < OUT_HEADER + INIT_OUT_SIZE
                || reply.get(INT, OUT_ERROR) != 0 || reply.get(INT, OUT_HEADER + INIT_OUT_MAJOR) != 7) {
            return -1;
        }
        reply.asSlice(length, OUT_HEADER + INIT_OUT_SIZE - length).fill((byte) 0);
        reply.set(INT, OUT_HEADER + INIT_OUT_FLAGS, reply.get(INT, OUT_HEADER + INIT_OUT_FLAGS) | INIT_EXT);
        reply.set(INT, OUT_HEADER + INIT_OUT_FLAGS2, flags2);
        if ((flags2 & FLAGS2_PASSTHROUGH) != 0) {
            reply.set(INT, OUT_HEADER + INIT_OUT_MAX_STACK_DEPTH, MAX_STACK_DEPTH);
        }
        reply.set(INT, OUT_LEN, (int) (OUT_HEADER + INIT_OUT_SIZE));
        return OUT_HEADER + INIT_OUT_SIZE;
    }

    /** The file handle of OPEN reply {@code reply} of {@code length} bytes, or -1 when it is not a successful one. */
    static long openHandle(MemorySegment reply, long length) {
        if (length != OUT_HEADER + OPEN_OUT_SIZE || reply.get(INT, OUT_ERROR) != 0) {
            return -1;
        }
        return reply.get(LONG, OUT_HEADER + OPEN_OUT_FH);
    }

    /**
     * Makes successful OPEN reply {@code reply} a passthrough open of backing file {@code backingId}. Every other open
     * flag is cleared: the kernel refuses passthrough with {@code FOPEN_KEEP_CACHE} (which libfuse's
     * {@code auto_cache} sets), and the backing file's own page cache is the one used.
     */
    static void passThrough(MemorySegment reply, int backingId) {
        reply.set(INT, OUT_HEADER + OPEN_OUT_FLAGS, FOPEN_PASSTHROUGH);
        reply.set(INT, OUT_HEADER + OPEN_OUT_BACKING_ID, backingId);
    }
}
