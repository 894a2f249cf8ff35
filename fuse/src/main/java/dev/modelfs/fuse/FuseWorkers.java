package dev.modelfs.fuse;

import static dev.modelfs.fuse.LibFuse.ADDR;
import static dev.modelfs.fuse.LibFuse.INT;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * Persistent, JVM-owned FUSE worker threads driving libfuse2's session through FFM downcalls
 * ({@code fuse_setup}, then per worker {@code fuse_chan_recv} / {@code fuse_session_process} in a loop,
 * as libfuse's own multi-threaded loop does with its threads; the bindings are {@link LibFuse}). jnr-fuse's
 * operation table is kept, so every callback still lands in {@link ModelFs}; since each callback runs on a thread
 * that is already a Java thread, none has to attach one (libfuse2's own multi-threaded loop creates and retires
 * native workers, and jffi attached a new Java thread for each: docs/DESIGN.md §3.1). A READ takes one of three
 * paths: under 8 KiB of an open file, the worker that received it answers it past libfuse ({@link SmallReads});
 * otherwise libfuse calls the {@code read_buf} upcall ({@link ReadBufUpcall}); with {@code --io-uring}, requests
 * arrive on ring entries instead ({@link FuseRing}, {@link RingEntries}).
 *
 * <p>Invariants: {@link #start} returns once the kernel mount exists; the workers run until the
 * mount goes away (unmount or {@code fusermount -u}); {@link #stop} waits for them and then releases
 * libfuse's session ({@code fuse_teardown}) exactly once. Only Linux x86-64 / aarch64 (LP64) layouts.
 */
final class FuseWorkers {
    private static final Logger LOG = Logger.getLogger(FuseWorkers.class.getName());
    private static final int EINTR = 4;
    private static final int EAGAIN = 11;
    private static final int ENOENT = 2;

    /** How many escaped failures were logged (at most 100, so that a failing loop cannot flood the log). */
    private static final java.util.concurrent.atomic.AtomicInteger ESCAPED_LOGGED = new java.util.concurrent.atomic.AtomicInteger();

    private final ModelFs fs;
    private final MemorySegment fuse;
    private final MemorySegment session;
    private final MemorySegment mountpointC;
    private final List<Thread> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
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
        this.session = (MemorySegment) LibFuse.GET_SESSION.invokeExact(fuse);
    }

    /**
     * Mounts {@code fs} with libfuse arguments {@code args} (mount point and options, as for
     * {@code fuse_main}) and starts {@code count} workers.
     *
     * @throws IOException when libfuse cannot mount (its reason is on stderr)
     */
    static FuseWorkers start(ModelFs fs, List<String> args, int count) throws IOException {
        return start(fs, args, count, true, true);
    }

    /**
     * Like {@link #start(ModelFs, List, int)}; whole-blob files are opened with kernel passthrough when
     * {@code kernelPassthrough} and the kernel and this process's privileges allow ({@link PassthroughChannels});
     * requests come through io_uring ({@link FuseRing}) when {@code ioUring} and the kernel allows. The warm-up
     * never goes through these workers: it reads through a private {@code ModelFs}'s own upcall stub
     * ({@code MountSession}, {@link FuseReadWarmup}).
     */
    static FuseWorkers start(ModelFs fs, List<String> args, int count, boolean kernelPassthrough, boolean ioUring) throws IOException {
        Arena arena = Arena.ofShared();
        try {
            MemorySegment ops = fs.copyOperations(arena);
            ReadBufUpcall.install(fs, ops, arena);
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
            MemorySegment f = (MemorySegment) LibFuse.SETUP.invokeExact(argv.size(), cargv, ops,
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
        MemorySegment ch = (MemorySegment) LibFuse.NEXT_CHAN.invokeExact(session, MemorySegment.NULL);
        long bufsize = (long) LibFuse.CHAN_BUFSIZE.invokeExact(ch);
        replies = PassthroughChannels.off(ch);
        int fd = (int) LibFuse.CHAN_FD.invokeExact(ch);
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
        WorkerGrowth[] growth = new WorkerGrowth[1];
        java.util.function.IntConsumer startWorker = i -> {
            MemorySegment buf = arena.allocate(bufsize, 4096);
            MemorySegment chp = arena.allocate(ADDR);
            SmallReads small = new SmallReads(fs, fd, arena);
            Thread t = new Thread(() -> loop(ch, chp, buf, r, small, growth[0]), "modelfs-fuse-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        };
        growth[0] = new WorkerGrowth(count, count + WorkerGrowth.MORE_WORKERS, startWorker);
        for (int i = 0; i < count; i++) {
            startWorker.accept(i);
        }
    }

    /** One worker: receive a request, process it (callbacks run on this thread), until the session ends. */
    private void loop(MemorySegment ch, MemorySegment chp, MemorySegment buf, PassthroughChannels replies, SmallReads small,
                      WorkerGrowth growth) {
        try {
            while (serveOne(session, ch, chp, buf, replies, small, growth)) {
                // each request in its own call: serveOne is compiled after a few hundred requests, where a loop body
                // running since the thread started stays interpreted until an on-stack replacement (tens of thousands)
            }
            LibFuse.SESSION_EXIT.invokeExact(session);                  // wakes no one, but marks the session done
        } catch (Throwable t) {
            LOG.severe("FUSE worker " + Thread.currentThread().getName() + " stopped: " + t);
        }
    }

    /**
     * Receives and processes one request of {@code session} from channel {@code ch}: a small read is answered by
     * {@code small} ({@link SmallReads}), anything else by libfuse (answered on the channel
     * {@code replies} chooses: INIT and OPEN may be rewritten); false once the session is over (unmounted, or the
     * channel failed). {@code growth} starts another worker when this one took the last waiting place
     * ({@link WorkerGrowth}).
     */
    static boolean serveOne(MemorySegment session, MemorySegment ch, MemorySegment chp, MemorySegment buf,
                                    PassthroughChannels replies, SmallReads small, WorkerGrowth growth) throws Throwable {
        if ((int) LibFuse.EXITED.invokeExact(session) != 0) {
            return false;
        }
        chp.set(ADDR, 0, ch);
        int res = (int) LibFuse.CHAN_RECV.invokeExact(chp, buf, buf.byteSize());
        if (res == -EINTR || res == -EAGAIN || res == -ENOENT) {
            return true;
        }
        if (res <= 0) {
            return false;                                       // 0: unmounted; < 0: the channel failed
        }
        growth.taken();
        try {
            if (!small.serve(buf, res)) {
                LibFuse.PROCESS.invokeExact(session, buf, (long) res, replies.channelFor(buf, res, chp.get(ADDR, 0)));
            }
        } catch (Throwable t) {                                 // escaped every guard: the worker carries on
            if (ESCAPED_LOGGED.getAndIncrement() < 100) {
                LOG.severe("FUSE worker " + Thread.currentThread().getName() + ": request failed: " + t);
            }
        } finally {
            growth.done();
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
            LibFuse.TEARDOWN.invokeExact(fuse, mountpointC);
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
}
