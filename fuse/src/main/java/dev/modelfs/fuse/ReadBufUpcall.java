package dev.modelfs.fuse;

import static dev.modelfs.fuse.LibFuse.ADDR;
import static dev.modelfs.fuse.LibFuse.INT;
import static dev.modelfs.fuse.LibFuse.LINKER;
import static dev.modelfs.fuse.LibFuse.LONG;

import dev.modelfs.read.OpenedSource;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * READ through libfuse, the first of the three READ paths (docs/DESIGN.md §2.6; the others are {@link SmallReads},
 * past libfuse, and {@link RingEntries}, over io_uring): an FFM upcall installed as {@code read_buf} in the copied
 * operation table (libfuse then never calls {@code read}), which skips jnr's per-call wrappers. A range that lies in
 * one blob is answered with the blob's descriptor and position, which libfuse moves to the kernel with
 * {@code splice(2)} when the mount has {@code splice_write} (no copy through this process); anything else is read into
 * a malloc'ed buffer by {@link OpenedSource#read}.
 *
 * <p>Invariants: never throws into native code; every failure frees what it allocated and answers a negated errno;
 * what it hands libfuse is malloc'ed, and libfuse frees it.
 */
final class ReadBufUpcall {
    /** libfuse copies fd data under two pages instead of splicing it; such reads are read here directly. */
    private static final long SPLICE_MIN = 8192;
    private static final int ENOMEM = 12;
    private static final int EBADF = 9;

    private ReadBufUpcall() {}

    /** Installs the upcall for {@code fs} as {@code read_buf} of the operation table {@code ops}, its stub in {@code arena}. */
    static void install(ModelFs fs, MemorySegment ops, Arena arena) throws ReflectiveOperationException {
        MethodHandle readBuf = MethodHandles.lookup().findStatic(ReadBufUpcall.class, "readBuf",
                MethodType.methodType(int.class, ModelFs.class, MemorySegment.class, MemorySegment.class, long.class,
                        long.class, MemorySegment.class)).bindTo(fs);
        ops.set(ADDR, FuseStructs.OPS_READ_BUF, LINKER.upcallStub(readBuf, FunctionDescriptor.of(INT, ADDR, ADDR, LONG, LONG, ADDR), arena));
    }

    /**
     * A {@code read_buf} upcall stub for {@code fs} alone, in {@code arena}, outside any operation table libfuse holds:
     * what a warm-up calls through a private {@code ModelFs} while the mount serves ({@link FuseReadWarmup}).
     */
    static MemorySegment stub(ModelFs fs, Arena arena) throws ReflectiveOperationException {
        MemorySegment ops = arena.allocate(FuseStructs.OPERATIONS);
        install(fs, ops, arena);
        return ops.get(ADDR, FuseStructs.OPS_READ_BUF);
    }

    /**
     * {@code int read_buf(const char *path, struct fuse_bufvec **bufp, size_t size, off_t off, struct fuse_file_info *fi)}:
     * a malloc'ed one-buffer vector (libfuse frees it and its {@code mem} with {@code free}) that names the blob's
     * descriptor and position, or holds the bytes {@link OpenedSource#read} read; never throws.
     */
    private static int readBuf(ModelFs fs, MemorySegment path, MemorySegment bufp, long size, long offset, MemorySegment fi) {
        MemorySegment bv = MemorySegment.NULL;
        MemorySegment mem = MemorySegment.NULL;
        long start = System.nanoTime();
        try {
            long fh = fi.reinterpret(FuseStructs.FILE_INFO.byteSize()).get(LONG, FuseStructs.FI_FH);
            OpenedSource src = fs.openSource(fh);
            if (src == null) {
                return -EBADF;
            }
            bv = ((MemorySegment) LibFuse.MALLOC.invokeExact(FuseStructs.BUFVEC.byteSize())).reinterpret(FuseStructs.BUFVEC.byteSize());
            if (bv.equals(MemorySegment.NULL)) {
                return -ENOMEM;
            }
            bv.fill((byte) 0);
            bv.set(LONG, FuseStructs.BV_COUNT, 1);
            int segment = size >= SPLICE_MIN ? src.blobSegment(offset, size) : -1;
            long served = 0;
            if (segment >= 0) {
                served = Math.min(size, src.size() - offset);
                bv.set(LONG, FuseStructs.BV_BUF_SIZE, served);
                bv.set(INT, FuseStructs.BV_BUF_FLAGS, FuseStructs.BUF_IS_FD | FuseStructs.BUF_FD_SEEK);
                bv.set(INT, FuseStructs.BV_BUF_FD, src.blobDescriptor(segment));
                bv.set(LONG, FuseStructs.BV_BUF_POS, src.blobPosition(segment, offset));
            } else if (size > 0) {
                mem = ((MemorySegment) LibFuse.MALLOC.invokeExact(size)).reinterpret(size);
                if (mem.equals(MemorySegment.NULL)) {
                    LibFuse.FREE.invokeExact(bv);
                    return -ENOMEM;
                }
                served = src.read(offset, mem, 0, size);                    // a failure frees both below
                bv.set(LONG, FuseStructs.BV_BUF_SIZE, served);
                bv.set(ADDR, FuseStructs.BV_BUF_MEM, mem);
            }
            bufp.reinterpret(ADDR.byteSize()).set(ADDR, 0, bv);
            fs.readDone(src, served, start);
            return 0;
        } catch (Throwable t) {
            try {
                if (!mem.equals(MemorySegment.NULL)) LibFuse.FREE.invokeExact(mem);
                if (!bv.equals(MemorySegment.NULL)) LibFuse.FREE.invokeExact(bv);
            } catch (Throwable ignored) {
                // nothing more to do: the request fails with the original error
            }
            return fs.readFailed(path, t);
        }
    }
}
