package dev.modelfs.fuse;

import static dev.modelfs.fuse.LibFuse.ADDR;
import static dev.modelfs.fuse.LibFuse.INT;
import static dev.modelfs.fuse.LibFuse.LINKER;
import static dev.modelfs.fuse.LibFuse.LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * The workers' request loop ({@link FuseWorkers#serveOne}) run by the warm-up over a session and a channel that no
 * kernel feeds, so that its downcalls are linked and the loop compiled before a client's first request.
 *
 * <p>Invariants: touches no mount and no kernel file; everything it makes lives in an arena of its own, closed
 * before {@link #run} returns.
 */
final class WorkerLoopWarmup {
    /** The length {@link #run}'s channel says it received (a FUSE request header and a small argument). */
    private static final int WARM_REQUEST = 80;

    private WorkerLoopWarmup() {}

    /**
     * Runs the workers' {@link FuseWorkers#serveOne} {@code calls} times over a session and a channel of its own that no kernel
     * mount feeds: the channel's {@code receive} answers {@value #WARM_REQUEST} bytes and the session's {@code process}
     * does nothing. So the loop's three downcalls ({@code fuse_session_exited}, {@code fuse_chan_recv},
     * {@code fuse_session_process}) are linked, their method handles customized and {@code serveOne} compiled before
     * the kernel's first request, not during a client's first read (where they cost about 10 % of a fresh mount's
     * first read of a plain file: BENCHMARKS.md). The buffers come from a shared arena, as the workers' do, so that the
     * compiled code sees the segment types it will serve with. Returns the requests served.
     *
     * @throws Throwable what a downcall or libfuse's allocation threw
     */
    static int run(int calls) throws Throwable {
        try (Arena arena = Arena.ofShared()) {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            MemorySegment sessionOps = arena.allocate(ADDR, 4);              // process, exit, exited, destroy
            sessionOps.setAtIndex(ADDR, 0, LINKER.upcallStub(lookup.findStatic(WorkerLoopWarmup.class, "warmProcess",
                    MethodType.methodType(void.class, MemorySegment.class, MemorySegment.class, long.class, MemorySegment.class)),
                    FunctionDescriptor.ofVoid(ADDR, ADDR, LONG, ADDR), arena));
            MemorySegment chanOps = arena.allocate(ADDR, 3);                 // receive, send, destroy
            chanOps.setAtIndex(ADDR, 0, LINKER.upcallStub(lookup.findStatic(WorkerLoopWarmup.class, "warmReceive",
                    MethodType.methodType(int.class, MemorySegment.class, MemorySegment.class, long.class)),
                    FunctionDescriptor.of(INT, ADDR, ADDR, LONG), arena));
            MemorySegment session = (MemorySegment) LibFuse.SESSION_NEW.invokeExact(sessionOps, MemorySegment.NULL);
            if (session.equals(MemorySegment.NULL)) {
                throw new IllegalStateException("fuse_session_new failed");
            }
            try {
                MemorySegment ch = (MemorySegment) LibFuse.CHAN_NEW.invokeExact(chanOps, -1, (long) WARM_REQUEST, MemorySegment.NULL);
                if (ch.equals(MemorySegment.NULL)) {
                    throw new IllegalStateException("fuse_chan_new failed");
                }
                try {
                    MemorySegment chp = arena.allocate(ADDR);
                    MemorySegment buf = arena.allocate(4096, 4096);
                    PassthroughChannels replies = PassthroughChannels.off(ch);
                    SmallReads small = new SmallReads(null, -1, arena);          // declines every request here: none is a READ
                    int served = 0;
                    while (served < calls && FuseWorkers.serveOne(session, ch, chp, buf, replies, small, WorkerGrowth.NONE)) {
                        served++;
                    }
                    return served;
                } finally {
                    LibFuse.CHAN_DESTROY.invokeExact(ch);
                }
            } finally {
                LibFuse.SESSION_DESTROY.invokeExact(session);
            }
        }
    }

    /** Requests {@link #warmReceive} made: one in eight is an OPEN and one an INIT, so that both branches are compiled. */
    private static int warmReceived;

    /** {@link #run}'s channel: {@code int receive(struct fuse_chan **chp, char *buf, size_t size)}. */
    private static int warmReceive(MemorySegment chp, MemorySegment buf, long size) {
        int n = warmReceived++ & 7;
        int opcode = n == 3 ? PassthroughProtocol.OPCODE_OPEN : n == 7 ? PassthroughProtocol.OPCODE_INIT : 0;
        buf.reinterpret(size).set(INT, PassthroughProtocol.IN_OPCODE, opcode);
        return WARM_REQUEST;
    }

    /** {@link #run}'s session: {@code void process(void *data, const char *buf, size_t len, struct fuse_chan *ch)}. */
    private static void warmProcess(MemorySegment data, MemorySegment buf, long len, MemorySegment ch) {
        // nothing: the loop around it is what is warmed
    }
}
