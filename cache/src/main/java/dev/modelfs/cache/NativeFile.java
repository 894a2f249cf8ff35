package dev.modelfs.cache;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * A read-only file descriptor with {@code pread(2)} straight into native memory, through FFM downcalls:
 * no buffer objects, no allocation per read (unlike {@code FileChannel.read(ByteBuffer)}).
 *
 * <p>Invariants: the descriptor is open from construction until {@link #close()}; reads after close
 * fail with {@link IOException}; a read past the end of the file returns fewer bytes (0 at EOF).
 */
public final class NativeFile implements AutoCloseable {
    private static final int O_RDONLY = 0;
    private static final int O_CLOEXEC = 0x80000;     // Linux
    private static final MethodHandle OPEN;
    private static final MethodHandle PREAD;
    private static final MethodHandle CLOSE;

    static {
        Linker linker = Linker.nativeLinker();
        var libc = linker.defaultLookup();
        OPEN = linker.downcallHandle(libc.find("open").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        PREAD = linker.downcallHandle(libc.find("pread64").or(() -> libc.find("pread")).orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                        ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
        CLOSE = linker.downcallHandle(libc.find("close").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    }

    private volatile int fd;

    public NativeFile(Path path) throws IOException {
        int f;
        try (Arena a = Arena.ofConfined()) {
            f = (int) OPEN.invokeExact(a.allocateFrom(path.toString()), O_RDONLY | O_CLOEXEC);
        } catch (Throwable t) {
            throw new IOException("open " + path + ": " + t, t);
        }
        if (f < 0) {
            throw new IOException("open " + path + " failed");
        }
        this.fd = f;
    }

    /**
     * Reads up to {@code count} bytes at file offset {@code position} into native {@code dst} at
     * {@code dstOffset}, retrying short reads until {@code count} bytes or end of file.
     *
     * @return bytes read (less than {@code count} only at end of file)
     */
    public long pread(MemorySegment dst, long dstOffset, long count, long position) throws IOException {
        if (!dst.isNative() || dstOffset < 0 || count < 0 || dstOffset > dst.byteSize() - count) {
            throw new IllegalArgumentException("pread needs a native destination inside its bounds");
        }
        int f = fd;
        if (f < 0) {
            throw new IOException("file closed");
        }
        long done = 0;
        long base = dst.address() + dstOffset;
        while (done < count) {
            long r;
            try {
                r = (long) PREAD.invokeExact(f, MemorySegment.ofAddress(base + done), count - done, position + done);
            } catch (Throwable t) {
                throw new IOException("pread: " + t, t);
            }
            if (r < 0) {
                throw new IOException("pread failed at offset " + (position + done));
            }
            if (r == 0) {
                break;
            }
            done += r;
        }
        return done;
    }

    @Override
    public synchronized void close() {
        int f = fd;
        if (f >= 0) {
            fd = -1;
            try {
                int ignored = (int) CLOSE.invokeExact(f);
            } catch (Throwable t) {
                // the descriptor is released by the kernel either way
            }
        }
    }
}
