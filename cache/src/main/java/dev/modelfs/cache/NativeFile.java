package dev.modelfs.cache;

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
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A read-only file descriptor with {@code pread(2)} straight into native memory, through FFM downcalls:
 * no buffer objects, no allocation per read (unlike {@code FileChannel.read(ByteBuffer)}).
 *
 * <p>Invariants: the descriptor is open from construction until {@link #close()}; reads after close
 * fail with {@link IOException}; a read past the end of the file returns fewer bytes (0 at EOF).
 * A file obtained from {@link #openRegular} is a regular file, checked with {@code fstat} on the
 * opened descriptor itself (what was checked is what is read: no check-then-open race).
 */
public final class NativeFile implements AutoCloseable {
    private static final boolean ARM = "aarch64".equals(System.getProperty("os.arch"));
    private static final int O_RDONLY = 0;
    private static final int O_NOCTTY = 0x100;
    private static final int O_NONBLOCK = 0x800;        // a FIFO opens at once instead of waiting for a writer
    private static final int O_NOFOLLOW = ARM ? 0x8000 : 0x20000;
    private static final int O_CLOEXEC = 0x80000;     // Linux
    private static final int AT_FDCWD = -100;
    private static final int AT_SYMLINK_NOFOLLOW = 0x100;
    private static final int AT_EMPTY_PATH = 0x1000;
    private static final int STATX_BASIC_STATS = 0x7ff;
    private static final int STATX_SIZE_MASK = 0x200;
    private static final int S_IFMT = 0xf000;
    private static final int S_IFREG = 0x8000;
    private static final int S_IFLNK = 0xa000;
    private static final int ENOENT = 2;
    private static final int ENOTDIR = 20;
    private static final int ELOOP = 40;
    private static final long STATX_SIZE = 256;
    private static final MethodHandle OPEN;
    private static final MethodHandle PREAD;
    private static final MethodHandle CLOSE;
    private static final MethodHandle STATX;
    /** {@code statx} without errno capture, for {@link #currentSize()} (per read: no allocation). */
    private static final MethodHandle STATX_PLAIN;
    private static final MemorySegment EMPTY_PATH = Arena.global().allocateFrom("");
    /** Per-thread {@code struct statx} for {@link #currentSize()}. */
    private static final ThreadLocal<MemorySegment> STATX_BUF =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(STATX_SIZE, 8));
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    static {
        Linker linker = Linker.nativeLinker();
        var libc = linker.defaultLookup();
        Linker.Option errno = Linker.Option.captureCallState("errno");
        OPEN = linker.downcallHandle(libc.find("open").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT), errno);
        PREAD = linker.downcallHandle(libc.find("pread64").or(() -> libc.find("pread")).orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                        ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
        CLOSE = linker.downcallHandle(libc.find("close").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        STATX = linker.downcallHandle(libc.find("statx").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS), errno);
        STATX_PLAIN = linker.downcallHandle(libc.find("statx").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
    }

    private final Path path;
    private volatile int fd;

    /** Opens {@code path} (following symbolic links) without any check of what it is. */
    public NativeFile(Path path) throws IOException {
        this.path = path;
        this.fd = open(path, O_RDONLY | O_CLOEXEC);
    }

    private NativeFile(Path path, int fd) {
        this.path = path;
        this.fd = fd;
    }

    /**
     * What {@code statx(2)} says about a file: type and permission bits, owner, link count, size, identity, and the
     * last modification of its data ({@code mtimeNanos}) and of its inode ({@code ctimeNanos}, which no caller can
     * set: any write, truncation, {@code chmod} or {@code utimes} moves it), both in nanoseconds since the epoch.
     */
    public record Stat(int mode, long uid, long nlink, long size, long dev, long ino, long mtimeNanos, long ctimeNanos) {
        public boolean isRegular() {
            return (mode & S_IFMT) == S_IFREG;
        }

        public boolean isSymlink() {
            return (mode & S_IFMT) == S_IFLNK;
        }

        /** Same device and inode: the same file, whatever its name or size now. */
        public boolean sameFile(Stat o) {
            return dev == o.dev && ino == o.ino;
        }
    }

    /**
     * Opens a store file (blob or manifest) only if it is a regular file that reading cannot turn into
     * a way out of the store. A plain file (the open descriptor resolves to a path inside {@code within},
     * one hard link) is opened whatever its owner; a file that resolves elsewhere (through a symbolic
     * link of the file or of a folder on its path) or has other hard links only when {@code trustedOwner}
     * owns it (the store's owner, who could read it anyway). So whoever can write the store cannot make
     * a mount run by someone else (root) serve that someone's files. The checks are made on the opened
     * descriptor ({@code fstat}, {@code /proc/self/fd}), so what was checked is what is read.
     *
     * @param within       the real path of the folder the file belongs in ({@code blobs/}, {@code manifests/})
     * @param trustedOwner the uid allowed to own linked files, or -1 to skip the ownership checks
     * @throws NoSuchFileException    missing, a dangling or looping symbolic link, or not a regular
     *                                file (directory, FIFO, device, socket): there is no such file
     * @throws UntrustedFileException a linked file owned by someone else
     */
    public static NativeFile openRegular(Path path, Path within, long trustedOwner) throws IOException {
        Stat link = lstat(path);
        // nothing but a regular file is ever opened (opening a device can have effects)
        if (!(link.isSymlink() ? stat(path) : link).isRegular()) {
            throw new NoSuchFileException(path.toString(), null, "not a regular file");
        }
        // a plain file is opened with O_NOFOLLOW: a symbolic link swapped in after lstat fails (ELOOP)
        int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (link.isSymlink() ? 0 : O_NOFOLLOW);
        NativeFile f = new NativeFile(path, open(path, flags));
        try {
            Stat st = f.stat();
            if (!st.isRegular()) {
                throw new NoSuchFileException(path.toString(), null, "not a regular file");
            }
            if (trustedOwner >= 0 && st.uid() != trustedOwner) {
                Path real = f.realPath();
                if (!real.startsWith(within)) {
                    throw new UntrustedFileException(path, "it resolves to " + real + " outside " + within
                            + ", owned by uid " + st.uid() + ", not by the store's owner (uid " + trustedOwner + ")");
                }
                if (st.nlink() > 1) {
                    throw new UntrustedFileException(path, "it has " + st.nlink() + " hard links and is owned by uid "
                            + st.uid() + ", not by the store's owner (uid " + trustedOwner + ")");
                }
            }
            return f;
        } catch (IOException | RuntimeException e) {
            f.close();
            throw e;
        }
    }

    /** Where the open descriptor really is: the kernel's path of the opened file (no re-resolution of the name). */
    public Path realPath() throws IOException {
        int f = fd;
        if (f < 0) {
            throw new IOException("file closed");
        }
        return Files.readSymbolicLink(Path.of("/proc/self/fd/" + f));
    }

    /** {@code lstat} of {@code path} (a symbolic link itself, not its target). */
    public static Stat lstat(Path path) throws IOException {
        try (Arena a = Arena.ofConfined()) {
            return statx(AT_FDCWD, a.allocateFrom(path.toString()), AT_SYMLINK_NOFOLLOW, path);
        }
    }

    /** {@code stat} of {@code path} (following symbolic links). */
    public static Stat stat(Path path) throws IOException {
        try (Arena a = Arena.ofConfined()) {
            return statx(AT_FDCWD, a.allocateFrom(path.toString()), 0, path);
        }
    }

    /** {@code fstat} of the open descriptor: what is being read, not what the path names now. */
    public Stat stat() throws IOException {
        int f = fd;
        if (f < 0) {
            throw new IOException("file closed");
        }
        try (Arena a = Arena.ofConfined()) {
            return statx(f, a.allocateFrom(""), AT_EMPTY_PATH, path);
        }
    }

    /**
     * The file's current size ({@code fstat} of the descriptor), or -1 if it cannot be determined. Allocates
     * nothing after a thread's first call: the read path asks it per request.
     */
    public long currentSize() {
        int f = fd;
        if (f < 0) {
            return -1;
        }
        MemorySegment buf = STATX_BUF.get();
        try {
            int r = (int) STATX_PLAIN.invokeExact(f, EMPTY_PATH, AT_EMPTY_PATH, STATX_SIZE_MASK, buf);
            return r == 0 ? buf.get(ValueLayout.JAVA_LONG, 40) : -1;
        } catch (Throwable t) {
            return -1;
        }
    }

    /**
     * The open descriptor, for handing a range to the kernel ({@code splice}); valid until {@link #close()},
     * -1 after it. Callers must not close it.
     */
    public int descriptor() {
        return fd;
    }

    /** The path this file was opened by (for messages). */
    public Path path() {
        return path;
    }

    /**
     * Maps the first {@code size} bytes of this very file read-only into {@code arena} (through
     * {@code /proc/self/fd}, which reopens the open file, never the path).
     */
    public MemorySegment map(long size, Arena arena) throws IOException {
        int f = fd;
        if (f < 0) {
            throw new IOException("file closed");
        }
        try (FileChannel ch = FileChannel.open(Path.of("/proc/self/fd/" + f), StandardOpenOption.READ)) {
            return ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
        }
    }

    private static int open(Path path, int flags) throws IOException {
        int f;
        int errno;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = a.allocate(CALL_STATE);
            f = (int) OPEN.invokeExact(state, a.allocateFrom(path.toString()), flags);
            errno = (int) ERRNO.get(state, 0L);
        } catch (Throwable t) {
            throw new IOException("open " + path + ": " + t, t);
        }
        if (f < 0) {
            throw failure("open", path, errno);
        }
        return f;
    }

    private static Stat statx(int dirfd, MemorySegment name, int flags, Path path) throws IOException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = a.allocate(CALL_STATE);
            MemorySegment buf = a.allocate(STATX_SIZE, 8);
            int r = (int) STATX.invokeExact(state, dirfd, name, flags, STATX_BASIC_STATS, buf);
            if (r != 0) {
                throw failure("stat", path, (int) ERRNO.get(state, 0L));
            }
            return new Stat(Short.toUnsignedInt(buf.get(ValueLayout.JAVA_SHORT, 28)),
                    Integer.toUnsignedLong(buf.get(ValueLayout.JAVA_INT, 20)),
                    Integer.toUnsignedLong(buf.get(ValueLayout.JAVA_INT, 16)),
                    buf.get(ValueLayout.JAVA_LONG, 40),
                    (Integer.toUnsignedLong(buf.get(ValueLayout.JAVA_INT, 136)) << 32) | Integer.toUnsignedLong(buf.get(ValueLayout.JAVA_INT, 140)),
                    buf.get(ValueLayout.JAVA_LONG, 32),
                    nanos(buf, 112), nanos(buf, 96));
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("stat " + path + ": " + t, t);
        }
    }

    /** A {@code struct statx_timestamp} at {@code offset} ({@code s64 tv_sec, u32 tv_nsec}) in nanoseconds. */
    private static long nanos(MemorySegment statx, long offset) {
        return statx.get(ValueLayout.JAVA_LONG, offset) * 1_000_000_000L + Integer.toUnsignedLong(statx.get(ValueLayout.JAVA_INT, offset + 8));
    }

    private static IOException failure(String op, Path path, int errno) {
        return switch (errno) {
            case ENOENT, ENOTDIR -> new NoSuchFileException(path.toString());
            case ELOOP -> new NoSuchFileException(path.toString(), null, "symbolic link loop");
            default -> new IOException(op + " " + path + " failed (errno " + errno + ")");
        };
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
