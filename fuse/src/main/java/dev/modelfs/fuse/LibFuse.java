package dev.modelfs.fuse;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The libfuse2 session API and libc's allocator as FFM downcall handles, linked once per JVM: what
 * {@link FuseWorkers} drives a mount with ({@code fuse_setup}, {@code fuse_chan_recv}, {@code fuse_session_process},
 * {@code fuse_teardown} ...), what {@link WorkerLoopWarmup} builds a kernel-less session from, and the
 * {@code malloc}/{@code free} of the buffers libfuse frees ({@link ReadBufUpcall}).
 *
 * <p>Invariants: every handle is linked when this class initializes, so a libfuse without one of these symbols fails
 * the mount at once ({@link UnsatisfiedLinkError}) and never mid-request. Only LP64 layouts (x86-64, aarch64).
 */
final class LibFuse {
    static final Linker LINKER = Linker.nativeLinker();
    static final AddressLayout ADDR = ValueLayout.ADDRESS;
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;

    static final MethodHandle SETUP;
    static final MethodHandle GET_SESSION;
    static final MethodHandle NEXT_CHAN;
    static final MethodHandle CHAN_BUFSIZE;
    static final MethodHandle CHAN_RECV;
    static final MethodHandle CHAN_FD;
    static final MethodHandle PROCESS;
    static final MethodHandle EXITED;
    static final MethodHandle SESSION_EXIT;
    static final MethodHandle TEARDOWN;
    static final MethodHandle MALLOC;
    static final MethodHandle FREE;
    static final MethodHandle SESSION_NEW;
    static final MethodHandle SESSION_DESTROY;
    static final MethodHandle CHAN_NEW;
    static final MethodHandle CHAN_DESTROY;
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

    private LibFuse() {}

    /** {@code free(3)}, for what {@code read_buf} malloc'ed when no libfuse frees it (a warm-up's calls). */
    static void free(MemorySegment p) {
        try {
            FREE.invokeExact(p);
        } catch (Throwable t) {
            throw new IllegalStateException("free", t);
        }
    }
}
