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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Logger;

import dev.modelfs.read.OpenedSource;

/**
 * Persistent, JVM-owned FUSE worker threads driving libfuse2's session through FFM downcalls
 * ({@code fuse_setup}, then per worker {@code fuse_chan_recv} / {@code fuse_session_process} in a loop,
 * as libfuse's own multi-threaded loop does with its threads). jnr-fuse's operation table is kept, so
 * every callback still lands in {@link ModelFs}; since each callback runs on a thread that is already a
 * Java thread, none has to attach one (libfuse2's own multi-threaded loop creates and retires native
 * workers, and jffi attached a new Java thread for each: docs/DESIGN.md §3.1). Reads go through an FFM
 * upcall installed as {@code read_buf} (libfuse then never calls {@code read}), which skips jnr's per-call
 * wrappers (a path string, a pointer and a file-info struct object per request): a range that lies in one
 * blob is answered with the blob's descriptor and position, which libfuse moves to the kernel with
 * {@code splice(2)} when the mount has {@code splice_write} (no copy through this process); anything else
 * is read into a buffer by {@link OpenedSource#read}. A read of under 8 KiB of an open file does not reach libfuse:
 * the worker that received it answers it ({@link SmallReads}).
 *
 * <p>Invariants: {@link #start} returns once the kernel mount exists; the workers run until the
 * mount goes away (unmount or {@code fusermount -u}); {@link #stop} waits for them and then releases
 * libfuse's session ({@code fuse_teardown}) exactly once. Only Linux x86-64 / aarch64 (LP64) layouts.
 */
final class FuseWorkers {
    private static final Logger LOG = Logger.getLogger(FuseWorkers.class.getName());
    private static final Linker LINKER = Linker.nativeLinker();
    private static final AddressLayout ADDR = ValueLayout.ADDRESS;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;
    /** libfuse copies fd data under two pages instead of splicing it; such reads are read here directly. */
    private static final long SPLICE_MIN = 8192;
    private static final int ENOMEM = 12;
    private static final int EBADF = 9;
    private static final int EINTR = 4;
    private static final int EAGAIN = 11;
    private static final int ENOENT = 2;

    /** How many escaped failures were logged (at most 100, so that a failing loop cannot flood the log). */
    private static final java.util.concurrent.atomic.AtomicInteger ESCAPED_LOGGED = new java.util.concurrent.atomic.AtomicInteger();

    private static final MethodHandle SETUP;
    private static final MethodHandle GET_SESSION;
    private static final MethodHandle NEXT_CHAN;
    private static final MethodHandle CHAN_BUFSIZE;
    private static final MethodHandle CHAN_RECV;
    private static final MethodHandle CHAN_FD;
    private static final MethodHandle PROCESS;
    private static final MethodHandle EXITED;
    private static final MethodHandle SESSION_EXIT;
    private static final MethodHandle TEARDOWN;
    private static final MethodHandle MALLOC;
    private static final MethodHandle FREE;
    private static final MethodHandle SESSION_NEW;
    private static final MethodHandle SESSION_DESTROY;
    private static final MethodHandle CHAN_NEW;
    private static final MethodHandle CHAN_DESTROY;
    /** The length {@link #warmLoop}'s channel says it received (a FUSE request header and a small argument). */
    private static final int WARM_REQUEST = 80;

    static {
        SymbolLookup fuse = SymbolLookup.libraryLookup("libfuse.so.2", Arena.global());
        SETUP = handle(fuse, "fuse_setup", FunctionDescriptor.of(ADDR, INT, ADDR, ADDR, LONG, ADDR, ADDR, ADDR));
        GET_SESSION = handle(fuse, "fuse_get_session", FunctionDescriptor.of(ADDR, ADDR));
        NEXT_CHAN = handle(fuse, "fuse_session_next_chan", FunctionDescriptor.of(ADDR, ADDR, ADDR));
        CHAN_BUFSIZE = handle(fuse, "fuse_chan_bufsize", FunctionDescriptor.of(LONG, ADDR));
        CHAN_FD = handle(fuse, "fuse_chan_fd", FunctionDescriptor.of(INT, ADDR));
        CHAN_RECV = handle(fuse, "fuse_chan_recv", FunctionDescriptor.of(INT, ADDR, ADDR, LONG));
        PROCESS = handle(fuse, "fuse_session_process", FunctionDescriptor.ofVoid(ADDR, ADDR, LONG, ADDR));
        EXITED = handle(fuse, "fuse_session_exited", FunctionDescriptor.of(INT, ADDR));
        SESSION_EXIT = handle(fuse, "fuse_session_exit", FunctionDescriptor.ofVoid(ADDR));
        TEARDOWN = handle(fuse, "fuse_teardown", FunctionDescriptor.ofVoid(ADDR, ADDR));
        SESSION_NEW = handle(fuse, "fuse_session_new", FunctionDescriptor.of(ADDR, ADDR, ADDR));
        SESSION_DESTROY = handle(fuse, "fuse_session_destroy", FunctionDescriptor.ofVoid(ADDR));
        CHAN_NEW = handle(fuse, "fuse_chan_new", FunctionDescriptor.of(ADDR, ADDR, INT, LONG, ADDR));
        CHAN_DESTROY = handle(fuse, "fuse_chan_destroy", FunctionDescriptor.ofVoid(ADDR));
        SymbolLookup libc = LINKER.defaultLookup();
        MALLOC = handle(libc, "malloc", FunctionDescriptor.of(ADDR, LONG));
        FREE = handle(libc, "free", FunctionDescriptor.ofVoid(ADDR));
    }

    private static MethodHandle handle(SymbolLookup lib, String name, FunctionDescriptor fd) {
        return LINKER.downcallHandle(lib.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libfuse.so.2: no " + name)), fd);
    }

    private final ModelFs fs;
    private final MemorySegment fuse;
    private final MemorySegment session;
    private final MemorySegment mountpointC;
    private final List<Thread> threads = new ArrayList<>();
    private final Arena arena;
    /** The channels INIT and OPEN are answered on (kernel passthrough, io_uring), set before the workers start. */
    private PassthroughChannels replies;
    /** The io_uring threads, or null when requests come only through /dev/fuse. */
    private FuseRing ring;
    private boolean stopped;

    private FuseWorkers(ModelFs fs, MemorySegment fuse, MemorySegment mountpointC, Arena arena) throws Throwable {
        this.fs = fs;
        this.fuse = fuse;
        this.mountpointC = mountpointC;
        this.arena = arena;
        this.session = (MemorySegment) GET_SESSION.invokeExact(fuse);
    }

    /**
     * Mounts {@code fs} with libfuse arguments {@code args} (mount point and options, as for
     * {@code fuse_main}) and starts {@code count} workers.
     *
     * @throws IOException when libfuse cannot mount (its reason is on stderr)
     */
    static FuseWorkers start(ModelFs fs, List<String> args, int count) throws IOException {
        return start(fs, args, count, true, true, readBuf -> { });
    }

    /**
     * Like {@link #start(ModelFs, List, int)}; whole-blob files are opened with kernel passthrough when
     * {@code kernelPassthrough} and the kernel and this process's privileges allow ({@link PassthroughChannels});
     * requests come through io_uring ({@link FuseRing}) when {@code ioUring} and the kernel allows;
     * {@code beforeMount} is given the {@code read_buf} upcall stub (a C
     * function pointer) once it exists and before the kernel mount does (a warm-up can call it:
     * {@link FuseReadWarmup}).
     */
    static FuseWorkers start(ModelFs fs, List<String> args, int count, boolean kernelPassthrough, boolean ioUring,
                             Consumer<MemorySegment> beforeMount) throws IOException {
        Arena arena = Arena.ofShared();
        try {
            MemorySegment ops = fs.copyOperations(arena);
            installReadBuf(fs, ops, arena);
            beforeMount.accept(ops.get(ADDR, FuseStructs.OPS_READ_BUF));
            List<String> argv = new ArrayList<>();
            argv.add("modelfs");
            argv.add("-f");                                     // never daemonize: this JVM is the server
            argv.addAll(args);
            MemorySegment cargv = arena.allocate(ADDR, argv.size() + 1);
            for (int i = 0; i < argv.size(); i++) {
                cargv.setAtIndex(ADDR, i, arena.allocateFrom(argv.get(i)));
            }
            MemorySegment mountpoint = arena.allocate(ADDR);
            MemorySegment multithreaded = arena.allocate(INT);
            MemorySegment f = (MemorySegment) SETUP.invokeExact(argv.size(), cargv, ops,
                    ops.byteSize(), mountpoint, multithreaded, MemorySegment.NULL);
            if (f.equals(MemorySegment.NULL)) {
                throw new IOException("libfuse could not mount (fuse_setup failed; see its message above)");
            }
            FuseWorkers w = new FuseWorkers(fs, f, mountpoint.get(ADDR, 0), arena);
            w.startThreads(Math.max(1, count), kernelPassthrough, ioUring);
            return w;
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        } catch (Throwable t) {
            arena.close();
            throw new IOException("libfuse: " + t, t);
        }
    }

    private void startThreads(int count, boolean kernelPassthrough, boolean ioUring) throws Throwable {
        MemorySegment ch = (MemorySegment) NEXT_CHAN.invokeExact(session, MemorySegment.NULL);
        long bufsize = (long) CHAN_BUFSIZE.invokeExact(ch);
        replies = PassthroughChannels.off(ch);
        int fd = (int) CHAN_FD.invokeExact(ch);
        boolean passthrough = kernelPassthrough && PassthroughChannels.mayRegister();
        if (kernelPassthrough && !passthrough) {
            LOG.info("kernel passthrough needs CAP_SYS_ADMIN (root): modelfs serves whole-blob files itself");
        }
        FuseRing ring = null;
        if (ioUring && !FuseRing.kernelAllows()) {
            LOG.warning("--io-uring: the kernel does not let FUSE servers use io_uring (Linux 6.14+; as root: echo Y >"
                    + " /sys/module/fuse/parameters/enable_uring): requests come through /dev/fuse");
        } else if (ioUring) {
            try {
                ring = FuseRing.create(fs, fd, session, count, bufsize);
            } catch (IOException | RuntimeException e) {
                LOG.warning("fuse-over-io_uring not set up (" + e.getMessage() + "): requests come through /dev/fuse");
            }
        }
        if (passthrough || ring != null) {
            try {
                replies = PassthroughChannels.on(fs, fd, bufsize, arena, passthrough, ring);
                this.ring = ring;
            } catch (Throwable t) {
                LOG.warning("kernel passthrough and io_uring not set up (" + t + "): modelfs serves every read through /dev/fuse");
                if (ring != null) {
                    ring.close();
                }
            }
        }
        PassthroughChannels r = replies;
        for (int i = 0; i < count; i++) {
            MemorySegment buf = arena.allocate(bufsize, 4096);
            MemorySegment chp = arena.allocate(ADDR);
            SmallReads small = new SmallReads(fs, fd, arena);
            Thread t = new Thread(() -> loop(ch, chp, buf, r, small), "modelfs-fuse-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
    }

    /** One worker: receive a request, process it (callbacks run on this thread), until the session ends. */
    private void loop(MemorySegment ch, MemorySegment chp, MemorySegment buf, PassthroughChannels replies, SmallReads small) {
        try {
            while (serveOne(session, ch, chp, buf, replies, small)) {
                // each request in its own call: serveOne is compiled after a few hundred requests, where a loop body
                // running since the thread started stays interpreted until an on-stack replacement (tens of thousands)
            }
            SESSION_EXIT.invokeExact(session);                  // wakes no one, but marks the session done
        } catch (Throwable t) {
            LOG.severe("FUSE worker " + Thread.currentThread().getName() + " stopped: " + t);
        }
    }

    /**
     * Receives and processes one request of {@code session} from channel {@code ch}: a small read is answered by
     * {@code small} ({@link SmallReads}), anything else by libfuse (answered on the channel
     * {@code replies} chooses: INIT and OPEN may be rewritten); false once the session is over (unmounted, or the
     * channel failed).
     */
    private static boolean serveOne(MemorySegment session, MemorySegment ch, MemorySegment chp, MemorySegment buf,
                                    PassthroughChannels replies, SmallReads small) throws Throwable {
        if ((int) EXITED.invokeExact(session) != 0) {
            return false;
        }
        chp.set(ADDR, 0, ch);
        int res = (int) CHAN_RECV.invokeExact(chp, buf, buf.byteSize());
        if (res == -EINTR || res == -EAGAIN || res == -ENOENT) {
            return true;
        }
        if (res <= 0) {
            return false;                                       // 0: unmounted; < 0: the channel failed
        }
        try {
            if (!small.serve(buf, res)) {
                PROCESS.invokeExact(session, buf, (long) res, replies.channelFor(buf, res, chp.get(ADDR, 0)));
            }
        } catch (Throwable t) {                                 // escaped every guard: the worker carries on
            if (ESCAPED_LOGGED.getAndIncrement() < 100) {
                LOG.severe("FUSE worker " + Thread.currentThread().getName() + ": request failed: " + t);
            }
        }
        return true;
    }

    /**
     * Waits up to {@code millis} for the workers (they end once the kernel mount is gone), then frees
     * libfuse's session. When a worker is still running the session is left alone (the process is
     * about to end anyway) and false is returned.
     */
    synchronized boolean stop(long millis) {
        if (stopped) {
            return true;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        if (!ThreadJoins.all(threads, deadline)) {
            return false;
        }
        if (ring != null && !ring.stop(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())))) {
            return false;
        }
        stopped = true;
        replies.close();
        try {
            TEARDOWN.invokeExact(fuse, mountpointC);
        } catch (Throwable t) {
            LOG.fine("fuse_teardown: " + t);
        }
        arena.close();
        return true;
    }

    /** Whether any worker still runs: false once the kernel has let go of the mount (unmounted, every file closed). */
    boolean running() {
        return threads.stream().anyMatch(Thread::isAlive);
    }

    /** Number of worker threads. */
    int size() {
        return threads.size();
    }

    /** {@code free(3)}, for what {@code read_buf} malloc'ed when no libfuse frees it (a warm-up's calls). */
    static void free(MemorySegment p) {
        try {
            FREE.invokeExact(p);
        } catch (Throwable t) {
            throw new IllegalStateException("free", t);
        }
    }

    // ---- the worker loop, warmed before mounting ----

    /**
     * Runs the workers' {@link #serveOne} {@code calls} times over a session and a channel of its own that no kernel
     * mount feeds: the channel's {@code receive} answers {@value #WARM_REQUEST} bytes and the session's {@code process}
     * does nothing. So the loop's three downcalls ({@code fuse_session_exited}, {@code fuse_chan_recv},
     * {@code fuse_session_process}) are linked, their method handles customized and {@code serveOne} compiled before
     * the kernel's first request, not during a client's first read (where they cost about 10 % of a fresh mount's
     * first read of a plain file: BENCHMARKS.md). The buffers come from a shared arena, as the workers' do, so that the
     * compiled code sees the segment types it will serve with. Returns the requests served.
     *
     * @throws Throwable what a downcall or libfuse's allocation threw
     */
    static int warmLoop(int calls) throws Throwable {
        try (Arena arena = Arena.ofShared()) {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            MemorySegment sessionOps = arena.allocate(ADDR, 4);              // process, exit, exited, destroy
            sessionOps.setAtIndex(ADDR, 0, LINKER.upcallStub(lookup.findStatic(FuseWorkers.class, "warmProcess",
                    MethodType.methodType(void.class, MemorySegment.class, MemorySegment.class, long.class, MemorySegment.class)),
                    FunctionDescriptor.ofVoid(ADDR, ADDR, LONG, ADDR), arena));
            MemorySegment chanOps = arena.allocate(ADDR, 3);                 // receive, send, destroy
            chanOps.setAtIndex(ADDR, 0, LINKER.upcallStub(lookup.findStatic(FuseWorkers.class, "warmReceive",
                    MethodType.methodType(int.class, MemorySegment.class, MemorySegment.class, long.class)),
                    FunctionDescriptor.of(INT, ADDR, ADDR, LONG), arena));
            MemorySegment session = (MemorySegment) SESSION_NEW.invokeExact(sessionOps, MemorySegment.NULL);
            if (session.equals(MemorySegment.NULL)) {
                throw new IllegalStateException("fuse_session_new failed");
            }
            try {
                MemorySegment ch = (MemorySegment) CHAN_NEW.invokeExact(chanOps, -1, (long) WARM_REQUEST, MemorySegment.NULL);
                if (ch.equals(MemorySegment.NULL)) {
                    throw new IllegalStateException("fuse_chan_new failed");
                }
                try {
                    MemorySegment chp = arena.allocate(ADDR);
                    MemorySegment buf = arena.allocate(4096, 4096);
                    PassthroughChannels replies = PassthroughChannels.off(ch);
                    SmallReads small = new SmallReads(null, -1, arena);          // declines every request here: none is a READ
                    int served = 0;
                    while (served < calls && serveOne(session, ch, chp, buf, replies, small)) {
                        served++;
                    }
                    return served;
                } finally {
                    CHAN_DESTROY.invokeExact(ch);
                }
            } finally {
                SESSION_DESTROY.invokeExact(session);
            }
        }
    }

    /** Requests {@link #warmReceive} made: one in eight is an OPEN and one an INIT, so that both branches are compiled. */
    private static int warmReceived;

    /** {@link #warmLoop}'s channel: {@code int receive(struct fuse_chan **chp, char *buf, size_t size)}. */
    private static int warmReceive(MemorySegment chp, MemorySegment buf, long size) {
        int n = warmReceived++ & 7;
        int opcode = n == 3 ? PassthroughProtocol.OPCODE_OPEN : n == 7 ? PassthroughProtocol.OPCODE_INIT : 0;
        buf.reinterpret(size).set(INT, PassthroughProtocol.IN_OPCODE, opcode);
        return WARM_REQUEST;
    }

    /** {@link #warmLoop}'s session: {@code void process(void *data, const char *buf, size_t len, struct fuse_chan *ch)}. */
    private static void warmProcess(MemorySegment data, MemorySegment buf, long len, MemorySegment ch) {
        // nothing: the loop around it is what is warmed
    }

    // ---- the read operation as an FFM upcall ----

    private static void installReadBuf(ModelFs fs, MemorySegment ops, Arena arena) throws ReflectiveOperationException {
        MethodHandle readBuf = MethodHandles.lookup().findStatic(FuseWorkers.class, "readBuf",
                MethodType.methodType(int.class, ModelFs.class, MemorySegment.class, MemorySegment.class, long.class,
                        long.class, MemorySegment.class)).bindTo(fs);
        ops.set(ADDR, FuseStructs.OPS_READ_BUF, LINKER.upcallStub(readBuf, FunctionDescriptor.of(INT, ADDR, ADDR, LONG, LONG, ADDR), arena));
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
            bv = ((MemorySegment) MALLOC.invokeExact(FuseStructs.BUFVEC.byteSize())).reinterpret(FuseStructs.BUFVEC.byteSize());
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
                mem = ((MemorySegment) MALLOC.invokeExact(size)).reinterpret(size);
                if (mem.equals(MemorySegment.NULL)) {
                    FREE.invokeExact(bv);
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
                if (!mem.equals(MemorySegment.NULL)) FREE.invokeExact(mem);
                if (!bv.equals(MemorySegment.NULL)) FREE.invokeExact(bv);
            } catch (Throwable ignored) {
                // nothing more to do: the request fails with the original error
            }
            return fs.readFailed(path, t);
        }
    }
}
