package dev.modelfs.fuse;

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
 * The calls this process makes on the FUSE device ({@code /dev/fuse}) itself, beside libfuse: writing a reply it
 * rewrote or made itself ({@code write(2)}; {@link SmallReads}), and registering a blob as the backing file of kernel passthrough opens
 * ({@code FUSE_DEV_IOC_BACKING_OPEN} / {@code _CLOSE}, Linux 6.9+, {@code CAP_SYS_ADMIN}). Every call answers
 * a result or a negated errno; none throws.
 */
final class FuseDevice {
    private FuseDevice() {}

    /** {@code _IOW(229, 1, struct fuse_backing_map)}: the map is {@code int32 fd; uint32 flags; uint64 padding}. */
    static final long IOC_BACKING_OPEN = (1L << 30) | (16L << 16) | (229L << 8) | 1;
    /** {@code _IOW(229, 2, uint32_t)}. */
    static final long IOC_BACKING_CLOSE = (1L << 30) | (4L << 16) | (229L << 8) | 2;
    private static final int EIO = 5;

    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle WRITE;
    private static final MethodHandle WRITEV;
    private static final MethodHandle IOCTL;

    static {
        Linker linker = Linker.nativeLinker();
        var libc = linker.defaultLookup();
        Linker.Option errno = Linker.Option.captureCallState("errno");
        WRITE = linker.downcallHandle(libc.find("write").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG), errno);
        WRITEV = linker.downcallHandle(libc.find("writev").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT), errno);
        IOCTL = linker.downcallHandle(libc.find("ioctl").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS),
                Linker.Option.firstVariadicArg(2), errno);
    }

    /** Writes {@code length} bytes of {@code msg} (one whole reply) to {@code fd}: 0, or the negated errno. */
    static int write(int fd, MemorySegment msg, long length) {
        try (Arena a = Arena.ofConfined()) {
            return write(fd, msg, length, a.allocate(CALL_STATE));
        }
    }

    /**
     * {@link #write(int, MemorySegment, long)} with the caller's {@link #callState} segment for {@code errno}, so that
     * nothing is allocated (a worker's small reads: {@link SmallReads}).
     */
    static int write(int fd, MemorySegment msg, long length, MemorySegment state) {
        try {
            long n = (long) WRITE.invokeExact(state, fd, msg, length);
            return n == length ? 0 : n < 0 ? -(int) ERRNO.get(state, 0L) : -EIO;
        } catch (Throwable t) {
            return -EIO;
        }
    }

    /** A segment for {@link #write(int, MemorySegment, long, MemorySegment)}'s {@code errno}, from {@code arena}. */
    static MemorySegment callState(Arena arena) {
        return arena.allocate(CALL_STATE);
    }

    /** {@code writev(fd, iov, count)} of one whole reply as libfuse gave it: 0, or the negated errno. */
    static int writev(int fd, MemorySegment iov, int count) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = a.allocate(CALL_STATE);
            long n = (long) WRITEV.invokeExact(state, fd, iov, count);
            return n >= 0 ? 0 : -(int) ERRNO.get(state, 0L);
        } catch (Throwable t) {
            return -EIO;
        }
    }

    /** Registers open file {@code backingFd} as a backing file of the connection of device {@code devFd}: its id (> 0), or the negated errno. */
    static int backingOpen(int devFd, int backingFd) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment map = a.allocate(16, 8);                  // zeroed: flags and padding must be 0
            map.set(ValueLayout.JAVA_INT, 0, backingFd);
            MemorySegment state = a.allocate(CALL_STATE);
            int id = (int) IOCTL.invokeExact(state, devFd, IOC_BACKING_OPEN, map);
            return id > 0 ? id : id == 0 ? -EIO : -(int) ERRNO.get(state, 0L);
        } catch (Throwable t) {
            return -EIO;
        }
    }

    /** Drops registration {@code id} (open files that use it keep their own reference): 0, or the negated errno. */
    static int backingClose(int devFd, int id) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment arg = a.allocate(ValueLayout.JAVA_INT);
            arg.set(ValueLayout.JAVA_INT, 0, id);
            MemorySegment state = a.allocate(CALL_STATE);
            int r = (int) IOCTL.invokeExact(state, devFd, IOC_BACKING_CLOSE, arg);
            return r >= 0 ? 0 : -(int) ERRNO.get(state, 0L);
        } catch (Throwable t) {
            return -EIO;
        }
    }
}
