package dev.modelfs.fuse;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.Collection;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;

import dev.modelfs.tree.FileNode;
import dev.modelfs.warmup.KernelWarmup;
import jnr.ffi.Pointer;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.FuseFileInfo;

/**
 * The FUSE half of the warm-up, behind the served mount: opens a file through the {@code getattr} and {@code open}
 * callbacks of a private {@link ModelFs} over the served tree and calls a {@code read_buf} upcall stub of that file
 * system itself ({@code ReadBufUpcall.stub}), as libfuse calls the mount's, so that the native-to-Java
 * transition, {@link ReadBufUpcall} and the splice and copy branches of a read (the copy branch also for
 * ranges across segment boundaries, {@code KernelWarmup.segmentBoundaries}) are compiled (and the classes an open
 * loads are loaded) before the kernel sends the first request (the kernels and {@code OpenedSource.read} are warmed by
 * {@code warmup.KernelWarmup} before it); and runs the workers' request loop over a session that is never mounted
 * ({@link #runWorkerLoop}).
 *
 * <p>Invariants: it reads only the files it is given, which must be files without conversions
 * ({@code KernelWarmup.plainFilesToRead}: their reads convert nothing and fill no cache: the splice branch
 * answers with a descriptor and position, the copy branch copies blob bytes); the {@code fuse_bufvec} and buffer
 * each call mallocs are freed here, as libfuse would; its reads reach the telemetry of the file system it is given, which for
 * {@code MountSession}'s private one is none ({@code ServedTree.warmupPolicy}), so that they count in no metric while
 * clients read the mount; every handle it opens is closed
 * before it returns; a failure ends it with a fine-level log line.
 */
final class FuseReadWarmup {
    private static final Logger LOG = Logger.getLogger(FuseReadWarmup.class.getName());
    /** Calls per file: past C2's invocation threshold (Tier4InvocationThreshold, 5000). */
    static final int CALLS = 6000;
    /** At most this many runs ({@code JitQueue.settle}): what one run compiled at a lower tier reaches C2 in the next. */
    static final int PASSES = 6;
    static final long LARGE = 128 << 10;
    private static final long SMALL = 4 << 10;
    private static final long REGION = 32L << 20;
    /** At most this many segment boundaries are read across per file. */
    private static final int BOUNDARIES = 64;
    /** Room for a {@code struct stat} (144 bytes on x86-64). */
    private static final long STAT_BYTES = 256;

    private FuseReadWarmup() {}

    /**
     * Runs the FUSE workers' request loop {@value #CALLS} times over a session that is never mounted
     * ({@link WorkerLoopWarmup#run}); a failure ends it with a fine-level log line. Returns the requests served.
     */
    static int runWorkerLoop() {
        try {
            return WorkerLoopWarmup.run(CALLS);
        } catch (Throwable t) {
            LOG.fine("FUSE worker loop warm-up stopped: " + t);
            return 0;
        }
    }

    /** Reads each of {@code files} (paths below the root) through {@code readBufStub}; returns the files read. */
    static int run(ModelFs fs, MemorySegment readBufStub, Collection<Path> files) {
        return run(fs, readBufStub, files, null);
    }

    /**
     * Like {@link #run(ModelFs, MemorySegment, Collection)}, and also serves as many synthetic READs of each file
     * through {@code ring} (a mount with {@code --io-uring}; null: none), the code that answers the rings' READs.
     */
    static int run(ModelFs fs, MemorySegment readBufStub, Collection<Path> files, RingEntries ring) {
        return run(fs, readBufStub, files, ring, () -> false);
    }

    /** The same, ending at the next call once {@code stop} holds (the mount stops while its warm-up runs). */
    static int run(ModelFs fs, MemorySegment readBufStub, Collection<Path> files, RingEntries ring, BooleanSupplier stop) {
        MethodHandle readBuf = Linker.nativeLinker().downcallHandle(readBufStub, FunctionDescriptor.of(ValueLayout.JAVA_INT,
                ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
        int read = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pathC = arena.allocateFrom("/");
            MemorySegment bufp = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment fi = arena.allocate(FuseStructs.FILE_INFO);
            MemorySegment stat = arena.allocate(STAT_BYTES, 16);
            jnr.ffi.Runtime rt = jnr.ffi.Runtime.getSystemRuntime();
            FuseFileInfo info = FuseFileInfo.of(Pointer.wrap(rt, fi.address()));
            FileStat st = FileStat.of(Pointer.wrap(rt, stat.address()));
            for (Path rel : files) {
                if (stop.getAsBoolean()) {
                    break;
                }
                String path = "/" + rel;
                if (!(fs.resolve(path) instanceof FileNode f) || f.size() == 0) {
                    LOG.fine("FUSE read warm-up skips " + rel + ": not a non-empty file");
                    continue;
                }
                fi.fill((byte) 0);                           // flags O_RDONLY
                if (fs.getattr(path, st) != 0 || fs.open(path, info) != 0) {   // the callbacks a kernel open makes
                    LOG.fine("FUSE read warm-up skips " + rel + ": it does not open");
                    continue;
                }
                try {
                    long region = Math.max(LARGE, Math.min(REGION, f.size()));
                    long[] boundaries = KernelWarmup.segmentBoundaries(f, BOUNDARIES);
                    for (int i = 0; i < CALLS && !stop.getAsBoolean(); i++) {
                        long size = i % 2 == 0 ? LARGE : SMALL;
                        long offset = i % 4 == 2 && boundaries.length > 0
                                ? Math.max(0, boundaries[(i / 4) % boundaries.length] - LARGE / 2)
                                : (i / 2) * LARGE % region;
                        if (ring != null) {
                            ring.warmRead(fi.get(ValueLayout.JAVA_LONG, FuseStructs.FI_FH), offset, (int) size);
                        }
                        if ((int) readBuf.invokeExact(pathC, bufp, size, offset, fi) == 0) {
                            MemorySegment bv = bufp.get(ValueLayout.ADDRESS, 0).reinterpret(FuseStructs.BUFVEC.byteSize());
                            MemorySegment mem = bv.get(ValueLayout.ADDRESS, FuseStructs.BV_BUF_MEM);
                            if (!mem.equals(MemorySegment.NULL)) {
                                LibFuse.free(mem);
                            }
                            LibFuse.free(bv);
                        }
                    }
                    read++;
                } catch (Throwable t) {
                    LOG.fine("FUSE read warm-up stops at " + rel + ": " + t);
                    break;
                } finally {
                    fs.release(path, info);
                }
            }
        }
        return read;
    }
}
