package dev.modelfs.fuse;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * One io_uring instance with 128-byte submission entries ({@code IORING_SETUP_SQE128}, which
 * {@code IORING_OP_URING_CMD} needs for its 80-byte command area), driven by raw system calls
 * ({@code io_uring_setup}, {@code io_uring_enter}) and three shared mappings: the submission ring, the completion
 * ring and the entry array (liburing's helpers are inline C, so nothing of it is used). Only the calls
 * {@link FuseRing} needs: take a free entry, submit what was taken and wait for completions, read completions.
 *
 * <p>Invariants: one thread at a time uses an instance (submission and completion are not synchronized; it is
 * made on one thread and served on another, so the kernel is not told {@code IORING_SETUP_SINGLE_ISSUER});
 * {@link #next} never hands out more entries than are free, counting
 * those taken but not yet submitted; the tail and head indexes are published with release stores and read with
 * acquire loads, as the kernel's side expects; {@link #close} unmaps and closes exactly once. Linux x86-64 and
 * aarch64 (their {@code io_uring_setup} and {@code io_uring_enter} numbers are the same).
 */
final class IoUring implements AutoCloseable {
    static final int SQE_BYTES = 128;
    static final int CQE_BYTES = 16;
    /** {@code IORING_OP_URING_CMD}. */
    static final byte OP_URING_CMD = 46;
    /** Offsets in a submission entry: opcode, fd, cmd_op (the union at 8), addr, len, user_data, the command area. */
    static final long SQE_OPCODE = 0;
    static final long SQE_FD = 4;
    static final long SQE_CMD_OP = 8;
    static final long SQE_ADDR = 16;
    static final long SQE_LEN = 24;
    static final long SQE_USER_DATA = 32;
    static final long SQE_CMD = 48;
    /** Offsets in a completion entry. */
    static final long CQE_USER_DATA = 0;
    static final long CQE_RES = 8;

    private static final long SYS_IO_URING_SETUP = 425;
    private static final long SYS_IO_URING_ENTER = 426;
    private static final int SETUP_SQE128 = 1 << 10;
    private static final int SETUP_SUBMIT_ALL = 1 << 7;
    private static final int SETUP_COOP_TASKRUN = 1 << 8;
    private static final int FEAT_SINGLE_MMAP = 1;
    private static final int ENTER_GETEVENTS = 1;
    private static final long OFF_SQ_RING = 0;
    private static final long OFF_CQ_RING = 0x8000000L;
    private static final long OFF_SQES = 0x10000000L;
    private static final int PROT_READ_WRITE = 0x3;
    private static final int MAP_SHARED_POPULATE = 0x01 | 0x8000;
    private static final int EINTR = 4;
    private static final int EAGAIN = 11;
    private static final int EBUSY = 16;

    /**
     * {@code struct io_uring_params}: sq_entries, cq_entries, flags, sq_thread_cpu, sq_thread_idle, features, wq_fd,
     * resv[3], then {@code io_sqring_offsets} and {@code io_cqring_offsets} (40 bytes each).
     */
    private static final StructLayout PARAMS = MemoryLayout.structLayout(
            ValueLayout.JAVA_INT.withName("sq_entries"), ValueLayout.JAVA_INT.withName("cq_entries"),
            ValueLayout.JAVA_INT.withName("flags"), ValueLayout.JAVA_INT.withName("sq_thread_cpu"),
            ValueLayout.JAVA_INT.withName("sq_thread_idle"), ValueLayout.JAVA_INT.withName("features"),
            ValueLayout.JAVA_INT.withName("wq_fd"), MemoryLayout.sequenceLayout(3, ValueLayout.JAVA_INT).withName("resv"),
            sqOffsets().withName("sq_off"), cqOffsets().withName("cq_off"));

    private static StructLayout sqOffsets() {
        return MemoryLayout.structLayout(ValueLayout.JAVA_INT.withName("head"), ValueLayout.JAVA_INT.withName("tail"),
                ValueLayout.JAVA_INT.withName("ring_mask"), ValueLayout.JAVA_INT.withName("ring_entries"),
                ValueLayout.JAVA_INT.withName("flags"), ValueLayout.JAVA_INT.withName("dropped"),
                ValueLayout.JAVA_INT.withName("array"), ValueLayout.JAVA_INT.withName("resv1"),
                ValueLayout.JAVA_LONG.withName("user_addr"));
    }

    private static StructLayout cqOffsets() {
        return MemoryLayout.structLayout(ValueLayout.JAVA_INT.withName("head"), ValueLayout.JAVA_INT.withName("tail"),
                ValueLayout.JAVA_INT.withName("ring_mask"), ValueLayout.JAVA_INT.withName("ring_entries"),
                ValueLayout.JAVA_INT.withName("overflow"), ValueLayout.JAVA_INT.withName("cqes"),
                ValueLayout.JAVA_INT.withName("flags"), ValueLayout.JAVA_INT.withName("resv1"),
                ValueLayout.JAVA_LONG.withName("user_addr"));
    }

    private static final VarHandle INT_VH = ValueLayout.JAVA_INT.varHandle();
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle SYSCALL3;
    private static final MethodHandle SYSCALL7;
    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;
    private static final MethodHandle CLOSE;

    static {
        Linker linker = Linker.nativeLinker();
        var libc = linker.defaultLookup();
        Linker.Option errno = Linker.Option.captureCallState("errno");
        ValueLayout.OfLong l = ValueLayout.JAVA_LONG;
        MemorySegment syscall = libc.find("syscall").orElseThrow();
        SYSCALL3 = linker.downcallHandle(syscall, FunctionDescriptor.of(l, l, l, ValueLayout.ADDRESS),
                Linker.Option.firstVariadicArg(1), errno);
        SYSCALL7 = linker.downcallHandle(syscall, FunctionDescriptor.of(l, l, l, l, l, l, l, l),
                Linker.Option.firstVariadicArg(1), errno);
        MMAP = linker.downcallHandle(libc.find("mmap").orElseThrow(), FunctionDescriptor.of(ValueLayout.ADDRESS,
                ValueLayout.ADDRESS, l, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, l), errno);
        MUNMAP = linker.downcallHandle(libc.find("munmap").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, l));
        CLOSE = linker.downcallHandle(libc.find("close").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    }

    private final int fd;
    private final MemorySegment ring;
    private final MemorySegment cqRing;
    private final MemorySegment sqes;
    private final MemorySegment state;
    private final long sqHead;
    private final long sqTail;
    private final long sqArray;
    private final int sqMask;
    private final int sqEntries;
    private final long cqHead;
    private final long cqTail;
    private final long cqes;
    private final int cqMask;
    /** Entries taken by {@link #next} and not yet accepted by the kernel. */
    private int unsubmitted;
    /** This side's copy of the submission tail (only this thread moves it). */
    private int tail;
    private boolean closed;

    private IoUring(int fd, MemorySegment ring, MemorySegment cqRing, MemorySegment sqes, MemorySegment params, Arena arena) {
        this.fd = fd;
        this.ring = ring;
        this.cqRing = cqRing;
        this.sqes = sqes;
        this.state = arena.allocate(CALL_STATE);
        long sq = PARAMS.byteOffset(MemoryLayout.PathElement.groupElement("sq_off"));
        long cq = PARAMS.byteOffset(MemoryLayout.PathElement.groupElement("cq_off"));
        this.sqHead = params.get(ValueLayout.JAVA_INT, sq);
        this.sqTail = params.get(ValueLayout.JAVA_INT, sq + 4);
        this.sqMask = ring.get(ValueLayout.JAVA_INT, params.get(ValueLayout.JAVA_INT, sq + 8));
        this.sqEntries = ring.get(ValueLayout.JAVA_INT, params.get(ValueLayout.JAVA_INT, sq + 12));
        this.sqArray = params.get(ValueLayout.JAVA_INT, sq + 24);
        this.cqHead = params.get(ValueLayout.JAVA_INT, cq);
        this.cqTail = params.get(ValueLayout.JAVA_INT, cq + 4);
        this.cqMask = cqRing.get(ValueLayout.JAVA_INT, params.get(ValueLayout.JAVA_INT, cq + 8));
        this.cqes = params.get(ValueLayout.JAVA_INT, cq + 20);
        this.tail = (int) INT_VH.getAcquire(ring, sqTail);
    }

    /**
     * A ring of at least {@code entries} submission entries (a power of two, at most 4096), its memory mapped, with
     * scratch from {@code arena}.
     *
     * @throws IOException when the kernel refuses ({@code io_uring_disabled}, no {@code SQE128}: Linux before 5.19,
     *                     seccomp) or a mapping fails; nothing stays open then
     */
    static IoUring open(int entries, Arena arena) throws IOException {
        MemorySegment params = arena.allocate(PARAMS);
        params.set(ValueLayout.JAVA_INT, 8, SETUP_SQE128 | SETUP_SUBMIT_ALL | SETUP_COOP_TASKRUN);
        MemorySegment st = arena.allocate(CALL_STATE);
        int fd;
        try {
            fd = (int) (long) SYSCALL3.invokeExact(st, SYS_IO_URING_SETUP, (long) entries, params);
        } catch (Throwable t) {
            throw new IOException("io_uring_setup: " + t, t);
        }
        if (fd < 0) {
            throw new IOException("io_uring_setup: errno " + (int) ERRNO.get(st, 0L));
        }
        MemorySegment ring = MemorySegment.NULL;
        MemorySegment cq = MemorySegment.NULL;
        try {
            int sqEntries = params.get(ValueLayout.JAVA_INT, 0);
            int cqEntries = params.get(ValueLayout.JAVA_INT, 4);
            long sq = PARAMS.byteOffset(MemoryLayout.PathElement.groupElement("sq_off"));
            long cqOff = PARAMS.byteOffset(MemoryLayout.PathElement.groupElement("cq_off"));
            long sqSize = params.get(ValueLayout.JAVA_INT, sq + 24) + 4L * sqEntries;
            long cqSize = params.get(ValueLayout.JAVA_INT, cqOff + 20) + (long) CQE_BYTES * cqEntries;
            boolean single = (params.get(ValueLayout.JAVA_INT, 20) & FEAT_SINGLE_MMAP) != 0;
            long ringSize = single ? Math.max(sqSize, cqSize) : sqSize;
            ring = map(fd, ringSize, OFF_SQ_RING, st);
            cq = single ? ring : map(fd, cqSize, OFF_CQ_RING, st);
            MemorySegment sqes = map(fd, (long) SQE_BYTES * sqEntries, OFF_SQES, st);
            return new IoUring(fd, ring, cq, sqes, params, arena);
        } catch (IOException | RuntimeException e) {
            unmap(cq.equals(ring) ? MemorySegment.NULL : cq);
            unmap(ring);
            closeFd(fd);
            throw e;
        }
    }

    private static MemorySegment map(int fd, long size, long offset, MemorySegment st) throws IOException {
        MemorySegment p;
        try {
            p = (MemorySegment) MMAP.invokeExact(st, MemorySegment.NULL, size, PROT_READ_WRITE, MAP_SHARED_POPULATE, fd, offset);
        } catch (Throwable t) {
            throw new IOException("mmap io_uring: " + t, t);
        }
        if (p.address() == -1L) {
            throw new IOException("mmap io_uring at " + Long.toHexString(offset) + ": errno " + (int) ERRNO.get(st, 0L));
        }
        return p.reinterpret(size);
    }

    private static void unmap(MemorySegment m) {
        if (m.equals(MemorySegment.NULL)) {
            return;
        }
        try {
            int ignored = (int) MUNMAP.invokeExact(m, m.byteSize());
        } catch (Throwable t) {
            // nothing more to do while failing
        }
    }

    private static void closeFd(int fd) {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            // nothing more to do
        }
    }

    /**
     * Submits a no-op and waits for its completion: whether this ring works end to end (a seccomp filter or a
     * kernel setting can refuse {@code io_uring_enter} after {@code io_uring_setup} succeeded).
     */
    boolean selfTest() {
        long s = next();
        sqes.set(ValueLayout.JAVA_BYTE, s + SQE_OPCODE, (byte) 0);     // IORING_OP_NOP
        sqes.set(ValueLayout.JAVA_LONG, s + SQE_USER_DATA, -1L);
        push();
        if (submitAndWait(1) != 0 || ready() != 1) {
            return false;
        }
        long c = completion(0);
        boolean ok = cqRing.get(ValueLayout.JAVA_LONG, c + CQE_USER_DATA) == -1L && cqRing.get(ValueLayout.JAVA_INT, c + CQE_RES) == 0;
        consume(1);
        return ok;
    }

    /**
     * The offset in {@link #submissions} of the next free submission entry, zeroed, to fill and then {@link #push};
     * its array slot is set now.
     *
     * @throws IllegalStateException when every entry is taken and not yet submitted
     */
    long next() {
        int head = (int) INT_VH.getAcquire(ring, sqHead);
        if (tail - head >= sqEntries) {
            throw new IllegalStateException("io_uring: submission queue full");
        }
        int slot = tail & sqMask;
        long at = (long) slot * SQE_BYTES;
        for (long i = 0; i < SQE_BYTES; i += 8) {
            sqes.set(ValueLayout.JAVA_LONG, at + i, 0L);
        }
        ring.set(ValueLayout.JAVA_INT, sqArray + 4L * slot, slot);
        return at;
    }

    /** The submission entries, which {@link #next}'s offsets index. */
    MemorySegment submissions() {
        return sqes;
    }

    /** The completion ring, which {@link #completion}'s offsets index. */
    MemorySegment completions() {
        return cqRing;
    }

    /** Publishes the entry {@link #next} returned last (after it was filled). */
    void push() {
        tail++;
        INT_VH.setRelease(ring, sqTail, tail);
        unsubmitted++;
    }

    /**
     * Submits every pushed entry and waits until at least {@code minComplete} completions are ready (0: no wait).
     * Returns 0, or the negated errno of a failure other than an interrupted or busy wait (which are retried).
     */
    int submitAndWait(int minComplete) {
        while (true) {
            long r;
            try {
                r = (long) SYSCALL7.invokeExact(state, SYS_IO_URING_ENTER, (long) fd, (long) unsubmitted,
                        (long) minComplete, (long) (minComplete > 0 ? ENTER_GETEVENTS : 0), 0L, 0L);
            } catch (Throwable t) {
                return -EINTR;
            }
            if (r >= 0) {
                unsubmitted -= (int) Math.min(r, unsubmitted);
                if (unsubmitted == 0 || minComplete == 0) {
                    return 0;
                }
                continue;                                       // accepted fewer than pushed: offer the rest
            }
            int errno = (int) ERRNO.get(state, 0L);
            if (errno != EINTR && errno != EAGAIN && errno != EBUSY) {
                return -errno;
            }
            if (errno == EINTR && ready() > 0) {
                return 0;
            }
        }
    }

    /** Completions ready to read. */
    int ready() {
        return (int) INT_VH.getAcquire(cqRing, cqTail) - cqRing.get(ValueLayout.JAVA_INT, cqHead);
    }

    /** The offset in {@link #completions} of the {@code i}-th ready completion (0 is the oldest; {@code i < ready()}). */
    long completion(int i) {
        int head = cqRing.get(ValueLayout.JAVA_INT, cqHead);
        return cqes + (long) ((head + i) & cqMask) * CQE_BYTES;
    }

    /** Marks the oldest {@code n} ready completions read. */
    void consume(int n) {
        int head = cqRing.get(ValueLayout.JAVA_INT, cqHead);
        INT_VH.setRelease(cqRing, cqHead, head + n);
    }

    /** Unmaps the rings and closes the instance (which cancels what it still has in flight). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        unmap(sqes);
        if (!cqRing.equals(ring)) {
            unmap(cqRing);
        }
        unmap(ring);
        closeFd(fd);
    }
}
