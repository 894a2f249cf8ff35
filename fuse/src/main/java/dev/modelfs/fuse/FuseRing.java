package dev.modelfs.fuse;

import java.io.IOException;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

/**
 * FUSE over io_uring (Linux 6.14+, {@code fuse.enable_uring=1}): once the kernel has the INIT reply that accepts
 * {@code FUSE_OVER_IO_URING}, every request but {@code FORGET} and {@code INTERRUPT} (which stay on {@code /dev/fuse},
 * where {@link FuseWorkers} serve them) reaches this process as the completion of an {@code IORING_OP_URING_CMD}, and
 * its reply goes back in the same system call that fetches the next one ({@code FUSE_IO_URING_CMD_COMMIT_AND_FETCH}):
 * one {@code io_uring_enter} per request instead of a {@code read} and a {@code write} on the device, and no wake-up
 * of a thread that then has to find work.
 *
 * <p>The kernel keeps one queue per possible CPU and puts a request on the queue of the CPU that made it. Each of this
 * class's threads has its own ring, is kept on one CPU and has entries (a header buffer and a payload buffer the kernel
 * copies requests into and replies out of) on that CPU's queue and on the next one ({@link #entryQueues}): the reader
 * waiting on a CPU is answered by the thread on that CPU, and a queue with more requests than its own thread takes
 * lends them to a neighbour. How a request is answered is {@link RingEntries}': a {@code READ} straight into the
 * entry's payload buffer, anything else by libfuse with a channel that puts the reply into the entry.
 *
 * <p>Invariants: the rings exist before INIT is answered, so FUSE_OVER_IO_URING is accepted only when this process
 * can serve it (once the kernel has it, new requests wait until every queue has an entry); every request fetched is
 * committed exactly once, with its reply or an errno; a thread ends when all its entries have ended (the kernel ends
 * them with {@code ENOTCONN} or {@code ECONNABORTED} when the mount goes away); a {@code READ} allocates nothing
 * (a request libfuse processes costs the upcall's argument objects, as on {@code /dev/fuse}).
 */
final class FuseRing {
    private static final Logger LOG = Logger.getLogger(FuseRing.class.getName());
    private static final Linker LINKER = Linker.nativeLinker();
    private static final AddressLayout ADDR = ValueLayout.ADDRESS;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;

    /** {@code struct fuse_uring_req_header}: in_out (128 bytes), op_in (128), ring_ent_in_out (32). */
    static final long HEADER_BYTES = 288;
    static final long OP_IN = 128;
    static final long OP_IN_BYTES = 128;
    static final long ENT_COMMIT_ID = 256 + 8;
    static final long ENT_PAYLOAD_SZ = 256 + 16;
    /** {@code struct fuse_uring_cmd_req} in the submission entry's command area: flags, commit_id, qid. */
    static final long CMD_COMMIT_ID = IoUring.SQE_CMD + 8;
    static final long CMD_QID = IoUring.SQE_CMD + 16;
    static final int CMD_REGISTER = 1;
    static final int CMD_COMMIT_AND_FETCH = 2;

    private static final int EAGAIN = 11;
    private static final int ENOTCONN = 107;
    private static final int ECONNABORTED = 103;
    private static final int ENODEV = 19;

    /** Entries a thread has on its own CPU's queue. */
    static final int HOME_ENTRIES = 2;
    private static final MethodHandle SET_AFFINITY = LINKER.downcallHandle(
            LINKER.defaultLookup().find("sched_setaffinity").orElseThrow(), FunctionDescriptor.of(INT, INT, LONG, ADDR));

    /** How many unexpected failures were logged (at most 20, so that a failing ring cannot flood the log). */
    private static final AtomicInteger LOGGED = new AtomicInteger();

    private final ModelFs fs;
    private final int devFd;
    private final int queues;
    private final List<Worker> workers = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final Arena arena;
    private volatile boolean passthrough;
    private boolean closed;

    private FuseRing(ModelFs fs, int devFd, int queues, Arena arena) {
        this.fs = fs;
        this.devFd = devFd;
        this.queues = queues;
        this.arena = arena;
    }

    /** Whether the running kernel lets FUSE servers use io_uring ({@code /sys/module/fuse/parameters/enable_uring}). */
    static boolean kernelAllows() {
        try {
            return Files.readString(Path.of("/sys/module/fuse/parameters/enable_uring")).trim().equals("Y");
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * The kernel's queue count: one per possible CPU ({@code /sys/devices/system/cpu/possible}, such as {@code 0-7}).
     *
     * @throws IOException when the file is missing or not a list of CPU ranges
     */
    static int possibleCpus() throws IOException {
        return cpuCount(Files.readString(Path.of("/sys/devices/system/cpu/possible")));
    }

    /**
     * The CPUs a kernel CPU list ({@code 0-7}, {@code 0,2-3}) numbers: its highest number plus one.
     *
     * @throws IOException when {@code list} is not a CPU list of at most 4096 CPUs
     */
    static int cpuCount(String list) throws IOException {
        int max = -1;
        try {
            for (String part : list.trim().split(",", -1)) {
                String[] range = part.split("-", -1);
                int lo = Integer.parseInt(range[0].trim());
                int hi = Integer.parseInt(range[range.length - 1].trim());
                if (range.length > 2 || lo < 0 || hi < lo) {
                    throw new NumberFormatException(part);
                }
                max = Math.max(max, hi);
            }
        } catch (NumberFormatException e) {
            throw new IOException("not a CPU list: " + list.trim(), e);
        }
        if (max < 0 || max > 4095) {
            throw new IOException("not a CPU list of at most 4096 CPUs: " + list.trim());
        }
        return max + 1;
    }

    /**
     * Rings for {@code threads} threads serving {@code fs} over device descriptor {@code devFd} with libfuse session
     * {@code session}; payload buffers of {@code payloadBytes} (at least the kernel's largest request or reply:
     * {@code max_write} and {@code max_pages} pages, which for libfuse 2.9 is the channel's buffer size).
     *
     * @throws IOException when a ring cannot be made (nothing is left open then)
     */
    static FuseRing create(ModelFs fs, int devFd, MemorySegment session, int threads, long payloadBytes) throws IOException {
        int queues = possibleCpus();
        Arena arena = Arena.ofShared();
        FuseRing r = new FuseRing(fs, devFd, queues, arena);
        try {
            for (int t = 0; t < threads; t++) {
                r.workers.add(r.new Worker(t, threads, session, payloadBytes));
            }
            return r;
        } catch (IOException | RuntimeException e) {
            r.close();
            throw e;
        } catch (Throwable t) {
            r.close();
            throw new IOException("fuse-over-io_uring: " + t, t);
        }
    }

    /**
     * Starts the threads, which register their entries; call once the kernel has the INIT reply that accepted
     * FUSE_OVER_IO_URING. {@code passthrough}: OPEN replies name backing files ({@link PassthroughChannels}).
     */
    synchronized void start(boolean passthrough) {
        this.passthrough = passthrough;
        // logged before any entry is registered: whoever sees a request answered through a ring can find this line
        LOG.info("fuse-over-io_uring: " + workers.size() + " threads on " + queues + " queues (one per possible CPU)");
        for (Worker w : workers) {
            Thread t = new Thread(w::run, "modelfs-uring-" + w.index);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
    }

    /**
     * Waits up to {@code millis} for the threads (they end once the mount is gone), then releases the rings; true
     * when everything was released (a thread still running keeps them, as the process is about to end anyway).
     */
    synchronized boolean stop(long millis) {
        if (!ThreadJoins.all(threads, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis))) {
            return false;
        }
        close();
        return true;
    }

    /**
     * Releases rings, channels and buffers: for rings never started, or whose threads have ended (while one runs,
     * nothing is released: the kernel may still write into its entries).
     */
    synchronized void close() {
        if (closed || threads.stream().anyMatch(Thread::isAlive)) {
            return;
        }
        closed = true;
        for (Worker w : workers) {
            w.release();
        }
        arena.close();
    }

    /**
     * The queue of each entry of thread {@code index} of {@code threads}, with {@code queues} queues: {@code home}
     * entries on the queue of its own CPU ({@code index mod queues}), one on each queue no thread is kept on that
     * falls to it ({@code index + threads}, {@code index + 2 threads}, ... when there are fewer threads than CPUs),
     * and one on the next CPU's queue, where it helps when that queue has more requests than its own thread takes.
     * Every queue thus has an entry (the kernel waits for that before it uses the rings), and a thread has at most
     * {@code home + ceil(queues / threads) + 1} entries, not one per CPU.
     */
    static int[] entryQueues(int index, int threads, int queues, int home) {
        int own = index % queues;
        List<Integer> q = new ArrayList<>();
        for (int i = 0; i < home; i++) {
            q.add(own);
        }
        if (index < queues) {
            for (int orphan = index + threads; orphan < queues; orphan += threads) {
                q.add(orphan);
            }
        }
        int next = (own + 1) % queues;
        if (!q.contains(next)) {
            q.add(next);
        }
        return q.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * Keeps the calling thread on CPU {@code cpu}, where the requests of its home queue are made: the reader that
     * waits for a reply and the thread that makes it then share a core and its caches, and waking one another needs
     * no interrupt between cores. Best effort: a CPU outside this process's set leaves the thread where it was.
     */
    private static void pin(int cpu) {
        try (Arena a = Arena.ofConfined()) {
            long bytes = Math.max(128, (cpu / 64 + 1) * 8L);
            MemorySegment mask = a.allocate(bytes, 8);
            mask.set(LONG, (cpu / 64) * 8L, 1L << (cpu % 64));
            int r = (int) SET_AFFINITY.invokeExact(0, bytes, mask);
            if (r != 0) {
                LOG.fine("fuse-over-io_uring: thread not kept on CPU " + cpu);
            }
        } catch (Throwable t) {
            LOG.fine("sched_setaffinity: " + t);
        }
    }

    /** Logs an unexpected failure of a ring, at most 20 times in all (a failing ring cannot flood the log). */
    static void logOnce(String what) {
        if (LOGGED.getAndIncrement() < 20) {
            LOG.warning("fuse-over-io_uring: " + what);
        }
    }

    /**
     * One thread's ring and entries: entry {@code e} is on queue {@code qidOf[e]} ({@link #entryQueues}), and its
     * index is the {@code user_data} of its submissions and completions.
     */
    private final class Worker {
        final int index;
        final int cpu;
        final int[] qidOf;
        final int entries;
        final IoUring ring;
        final RingEntries slots;
        final MemorySegment iovecs;

        Worker(int index, int threadCount, MemorySegment session, long payloadBytes) throws IOException {
            this.index = index;
            this.cpu = index % queues;
            this.qidOf = entryQueues(index, threadCount, queues, HOME_ENTRIES);
            this.entries = qidOf.length;
            this.iovecs = arena.allocate(32L * entries, 8);
            this.ring = IoUring.open(Math.min(4096, entries), arena);   // one submission per entry at a time
            try {
                if (!ring.selfTest()) {
                    throw new IOException("io_uring refuses submissions here");
                }
                this.slots = new RingEntries(fs, entries, payloadBytes, session, devFd, () -> passthrough, arena);
            } catch (IOException | RuntimeException e) {
                ring.close();                                   // the entries' channel, the last step, was not made
                throw e;
            }
        }

        void release() {
            ring.close();
            slots.release();
        }

        void run() {
            pin(cpu);
            int live = 0;
            try {
                live = registerAll();
            } catch (Throwable t) {
                LOG.severe("fuse-over-io_uring thread " + index + " could not register: " + t);
            }
            if (live == 0) {
                abandon();
                return;
            }
            try {
                boolean[] fetched = new boolean[entries];
                int retries = 0;
                while (live > 0) {
                    int r = ring.submitAndWait(1);
                    if (r < 0) {                                // the entries stay with the kernel: cannot happen
                        LOG.severe("fuse-over-io_uring thread " + index + ": io_uring_enter failed, errno " + -r);
                        return;
                    }
                    int n = ring.ready();
                    MemorySegment cq = ring.completions();
                    for (int i = 0; i < n; i++) {
                        long c = ring.completion(i);
                        long e = cq.get(LONG, c + IoUring.CQE_USER_DATA);
                        int res = cq.get(INT, c + IoUring.CQE_RES);
                        if (e < 0 || e >= entries) {
                            continue;                           // not an entry's (the self-test's no-op)
                        }
                        int entry = (int) e;
                        if (res == -EAGAIN && !fetched[entry] && retries++ < 1000) {
                            Thread.sleep(1);                    // not initialized yet: register again
                            register(entry);
                            continue;
                        }
                        if (res < 0) {
                            live--;
                            if (res != -ENOTCONN && res != -ECONNABORTED && res != -ENODEV) {
                                logOnce("entry " + entry + " of thread " + index + " ended: errno " + -res);
                            }
                            continue;
                        }
                        fetched[entry] = true;
                        try {
                            slots.serve(entry);
                        } catch (Throwable t) {                 // escaped every guard: the request fails, the thread goes on
                            logOnce("request failed: " + t);
                            slots.fail(entry);
                        }
                        commit(entry);
                    }
                    ring.consume(n);
                }
            } catch (Throwable t) {
                LOG.severe("fuse-over-io_uring thread " + index + " stopped: " + t);
            }
        }

        /** Queues the registration of every entry and submits them: the entries registered (0 on failure). */
        private int registerAll() {
            for (int e = 0; e < entries; e++) {
                register(e);
            }
            int r = ring.submitAndWait(0);
            if (r < 0) {
                LOG.severe("fuse-over-io_uring: registering entries: errno " + -r);
                return 0;
            }
            return entries;
        }

        /** Queues the registration of entry {@code e}: its header and payload buffers, on its queue. */
        private void register(int e) {
            iovecs.set(ADDR, 32L * e, slots.headers().asSlice(HEADER_BYTES * e, HEADER_BYTES));
            iovecs.set(LONG, 32L * e + 8, HEADER_BYTES);
            iovecs.set(ADDR, 32L * e + 16, slots.payload(e));
            iovecs.set(LONG, 32L * e + 24, slots.payloadBytes());
            long s = command(e, CMD_REGISTER, qidOf[e]);
            ring.submissions().set(ADDR, s + IoUring.SQE_ADDR, iovecs.asSlice(32L * e, 32));
            ring.submissions().set(INT, s + IoUring.SQE_LEN, 2);
            ring.push();
        }

        /**
         * Tells the kernel this thread will not serve: a registration for a queue that does not exist fails, and a
         * failed registration makes the kernel give up io_uring for the mount and send requests through
         * {@code /dev/fuse} again (they wait for the ring until then).
         */
        private void abandon() {
            try {
                long s = command(-1, CMD_REGISTER, 0xFFFF);
                ring.submissions().set(ADDR, s + IoUring.SQE_ADDR, iovecs.asSlice(0, 32));
                ring.submissions().set(INT, s + IoUring.SQE_LEN, 2);
                ring.push();
                ring.submitAndWait(0);
            } catch (Throwable t) {
                LOG.severe("fuse-over-io_uring: could not give up the ring: " + t);
            }
        }

        /** Fills a free submission entry with FUSE command {@code op} for entry {@code e} on queue {@code qid}; not pushed. */
        private long command(int e, int op, int qid) {
            long s = ring.next();
            MemorySegment sq = ring.submissions();
            sq.set(ValueLayout.JAVA_BYTE, s + IoUring.SQE_OPCODE, IoUring.OP_URING_CMD);
            sq.set(INT, s + IoUring.SQE_FD, devFd);
            sq.set(INT, s + IoUring.SQE_CMD_OP, op);
            sq.set(LONG, s + IoUring.SQE_USER_DATA, e);
            sq.set(ValueLayout.JAVA_SHORT, s + CMD_QID, (short) qid);
            return s;
        }

        /** Queues entry {@code e}'s reply and its fetch of the next request. */
        private void commit(int e) {
            long s = command(e, CMD_COMMIT_AND_FETCH, qidOf[e]);
            ring.submissions().set(LONG, s + CMD_COMMIT_ID, slots.commitId(e));
            ring.push();
        }
    }
}
