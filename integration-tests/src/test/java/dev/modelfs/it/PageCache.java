package dev.modelfs.it;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;

/**
 * Raw file descriptors for tests that must see errnos exactly and must make the kernel ask the mount
 * again: {@code open}/{@code pread}/{@code close} with their errno, and {@link #drop} = {@code
 * posix_fadvise(POSIX_FADV_DONTNEED)}, which empties the page cache of the descriptor's file, so the
 * next read is served by modelfs for that descriptor (the kernel keeps one page cache per path, shared
 * by descriptors opened on different versions of a model, docs/SEMANTICS.md "Open files").
 */
final class PageCache {
    static final int ENOENT = 2;
    static final int EIO = 5;
    static final int EACCES = 13;
    static final int EBUSY = 16;
    private static final int POSIX_FADV_RANDOM = 1;
    private static final int POSIX_FADV_DONTNEED = 4;
    private static final StructLayout STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle OPEN;
    private static final MethodHandle PREAD;
    private static final MethodHandle CLOSE;
    private static final MethodHandle FADVISE;

    static {
        Linker linker = Linker.nativeLinker();
        var libc = linker.defaultLookup();
        Linker.Option errno = Linker.Option.captureCallState("errno");
        OPEN = linker.downcallHandle(libc.find("open").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT), errno);
        PREAD = linker.downcallHandle(libc.find("pread64").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_LONG,
                ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG), errno);
        CLOSE = linker.downcallHandle(libc.find("close").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        // posix_fadvise returns the error number itself (it does not set errno)
        FADVISE = linker.downcallHandle(libc.find("posix_fadvise64").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    }

    private PageCache() {}

    /** {@code open(path, O_RDONLY)}: the descriptor, or minus the errno. */
    static int open(Path path) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = a.allocate(STATE);
            int fd = (int) OPEN.invokeExact(st, a.allocateFrom(path.toString()), 0);
            return fd >= 0 ? fd : -(int) ERRNO.get(st, 0L);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** {@code pread} of up to {@code len} bytes at {@code off} (short only at end of file): the bytes, or null with {@code errno[0]} set. */
    static byte[] pread(int fd, long off, int len, int[] errno) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = a.allocate(STATE);
            MemorySegment buf = a.allocate(Math.max(1, len));
            long done = 0;
            while (done < len) {
                long n = (long) PREAD.invokeExact(st, fd, buf.asSlice(done), (long) len - done, off + done);
                if (n < 0) {
                    errno[0] = (int) ERRNO.get(st, 0L);
                    return null;
                }
                if (n == 0) {
                    break;
                }
                done += n;
            }
            return buf.asSlice(0, done).toArray(ValueLayout.JAVA_BYTE);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Drops the page cache of {@code fd}'s file and turns off read-ahead for it. */
    static void drop(int fd) {
        try {
            int r = (int) FADVISE.invokeExact(fd, 0L, 0L, POSIX_FADV_DONTNEED);
            int q = (int) FADVISE.invokeExact(fd, 0L, 0L, POSIX_FADV_RANDOM);
            if (r != 0 || q != 0) {
                throw new IllegalStateException("posix_fadvise failed: " + r + " " + q);
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    static void close(int fd) {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    static String name(int errno) {
        return switch (errno) {
            case 0 -> "OK";
            case ENOENT -> "ENOENT";
            case EIO -> "EIO";
            case EACCES -> "EACCES";
            case EBUSY -> "EBUSY";
            default -> "errno " + errno;
        };
    }
}
