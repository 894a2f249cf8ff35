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
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.logging.Logger;

/**
 * Kernel passthrough for the files that are one whole blob ({@code FileKind.PASSTHROUGH}): their reads, splices and
 * memory maps go from the blob to the reader inside the kernel (Linux 6.9+, {@code FOPEN_PASSTHROUGH}), without a
 * request to this process. libfuse 2.9 speaks protocol 7.19 and knows nothing of it, so the two replies that carry
 * it are rewritten on their way to the kernel ({@link PassthroughProtocol}): the INIT reply accepts
 * {@code FUSE_PASSTHROUGH} when the kernel offers it, and an OPEN reply names the blob's registration
 * ({@link PassthroughOpens}) when the open file has one. The workers process requests of these two opcodes with a
 * libfuse channel of this class (the device's descriptor and buffer size, a {@code send} upcall that rewrites and
 * writes the reply), every other request with the kernel's channel, so a read costs one opcode comparison. The same
 * INIT reply accepts {@code FUSE_OVER_IO_URING} when the mount asked for it and its rings are ready ({@link FuseRing}),
 * which are started once that reply is written; OPEN replies that come through a ring are rewritten by
 * {@link #rewriteOpen}, as here.
 *
 * <p>Invariants: a reply is written to the device exactly once, rewritten or as libfuse made it; the upcalls never
 * throw (a failure answers a negated errno to libfuse, as its own channel does); with passthrough turned off
 * ({@link #off}) both opcodes use the kernel's channel.
 */
final class PassthroughChannels {
    private static final Logger LOG = Logger.getLogger(PassthroughChannels.class.getName());
    private static final Linker LINKER = Linker.nativeLinker();
    private static final AddressLayout ADDR = ValueLayout.ADDRESS;
    private static final MethodHandle CHAN_NEW;
    private static final MethodHandle CHAN_DESTROY;
    private static final long IOVEC = 16;
    private static final int EIO = 5;
    /** {@code CAP_SYS_ADMIN}, bit 21 of the capability sets. */
    private static final int CAP_SYS_ADMIN = 21;

    static {
        SymbolLookup fuse = SymbolLookup.libraryLookup("libfuse.so.2", Arena.global());
        CHAN_NEW = LINKER.downcallHandle(fuse.find("fuse_chan_new").orElseThrow(),
                FunctionDescriptor.of(ADDR, ADDR, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ADDR));
        CHAN_DESTROY = LINKER.downcallHandle(fuse.find("fuse_chan_destroy").orElseThrow(), FunctionDescriptor.ofVoid(ADDR));
    }

    private final MemorySegment initChannel;
    private final MemorySegment openChannel;
    private final ModelFs fs;
    private final int devFd;
    /** Whether whole-blob files may be opened with passthrough (this process may register backing files). */
    private final boolean passthrough;
    /** The rings to start when the kernel takes FUSE over io_uring, or null. */
    private final FuseRing ring;
    /** Whether the kernel's INIT offered passthrough (set by the worker that received it, before its reply is sent). */
    private volatile boolean offered;
    /** Whether the kernel's INIT offered FUSE over io_uring (likewise). */
    private volatile boolean offeredRing;

    private PassthroughChannels(MemorySegment initChannel, MemorySegment openChannel, ModelFs fs, int devFd,
                                boolean passthrough, FuseRing ring) {
        this.initChannel = initChannel;
        this.openChannel = openChannel;
        this.fs = fs;
        this.devFd = devFd;
        this.passthrough = passthrough;
        this.ring = ring;
    }

    /**
     * Whether this process may register backing files: the kernel asks for {@code CAP_SYS_ADMIN} in its effective set
     * ({@code CapEff} of {@code /proc/self/status}). Without it passthrough is not even offered to the kernel.
     */
    static boolean mayRegister() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("CapEff:")) {
                    return new BigInteger(line.substring(7).trim(), 16).testBit(CAP_SYS_ADMIN);
                }
            }
        } catch (IOException | NumberFormatException e) {
            LOG.fine("/proc/self/status: " + e);
        }
        return false;
    }

    /**
     * No rewriting: INIT and OPEN are answered on {@code kernel}, like every request (the kernel's channel, or the
     * channel of {@link WorkerLoopWarmup#run}).
     */
    static PassthroughChannels off(MemorySegment kernel) {
        return new PassthroughChannels(kernel, kernel, null, -1, false, null);
    }

    /**
     * INIT and OPEN answered by this class over device descriptor {@code devFd}, whose channel has buffers of
     * {@code bufsize} bytes (libfuse sizes its INIT reply's {@code max_write} by it): passthrough for {@code fs}'s
     * whole-blob files when {@code passthrough}, and FUSE over io_uring through {@code ring} (null: not offered to
     * the kernel) when the kernel offers it. The channels and upcall stubs live in {@code arena}; {@link #close}
     * destroys the channels before it is closed.
     */
    static PassthroughChannels on(ModelFs fs, int devFd, long bufsize, Arena arena, boolean passthrough, FuseRing ring)
            throws Throwable {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        MethodType send = MethodType.methodType(int.class, MemorySegment.class, MemorySegment.class, long.class);
        FunctionDescriptor sendC = FunctionDescriptor.of(ValueLayout.JAVA_INT, ADDR, ADDR, ValueLayout.JAVA_LONG);
        Holder h = new Holder();
        MemorySegment initOps = chanOps(arena, LINKER.upcallStub(
                lookup.findVirtual(Holder.class, "sendInit", send).bindTo(h), sendC, arena));
        MemorySegment openOps = chanOps(arena, LINKER.upcallStub(
                lookup.findVirtual(Holder.class, "sendOpen", send).bindTo(h), sendC, arena));
        MemorySegment init = (MemorySegment) CHAN_NEW.invokeExact(initOps, devFd, bufsize, MemorySegment.NULL);
        MemorySegment open = (MemorySegment) CHAN_NEW.invokeExact(openOps, devFd, bufsize, MemorySegment.NULL);
        if (init.equals(MemorySegment.NULL) || open.equals(MemorySegment.NULL)) {
            throw new IllegalStateException("fuse_chan_new failed");
        }
        h.target = new PassthroughChannels(init, open, fs, devFd, passthrough, ring);
        return h.target;
    }

    /** The upcalls' receiver, made before the channels it serves (it is bound into their stubs). */
    private static final class Holder {
        volatile PassthroughChannels target;

        @SuppressWarnings("unused")     // upcall: int send(struct fuse_chan *ch, const struct iovec iov[], size_t count)
        int sendInit(MemorySegment ch, MemorySegment iov, long count) {
            return target.sendInit(iov, count);
        }

        @SuppressWarnings("unused")
        int sendOpen(MemorySegment ch, MemorySegment iov, long count) {
            return target.sendOpen(iov, count);
        }
    }

    private static MemorySegment chanOps(Arena arena, MemorySegment send) {
        MemorySegment ops = arena.allocate(ADDR, 3);          // struct fuse_chan_ops: receive, send, destroy
        ops.setAtIndex(ADDR, 1, send);
        return ops;
    }

    /**
     * The channel to process request {@code request} ({@code length} bytes) with: this class's for INIT and OPEN,
     * {@code kernel} for every other opcode. Notes whether an INIT offers passthrough.
     */
    MemorySegment channelFor(MemorySegment request, int length, MemorySegment kernel) {
        int opcode = PassthroughProtocol.opcode(request);
        if (opcode == PassthroughProtocol.OPCODE_OPEN) {
            return openChannel;
        }
        if (opcode == PassthroughProtocol.OPCODE_INIT) {
            offered = passthrough && PassthroughProtocol.offersPassthrough(request, length);
            offeredRing = ring != null && PassthroughProtocol.offersIoUring(request, length);
            return initChannel;
        }
        return kernel;
    }

    /**
     * Libfuse's INIT reply, with passthrough and FUSE over io_uring accepted when the kernel offered them;
     * registrations are enabled before the reply is written (no OPEN can arrive before it), the rings started after
     * it (the kernel refuses their entries until it has the reply), or released when the kernel did not take them.
     */
    private int sendInit(MemorySegment iov, long count) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment msg = a.allocate(PassthroughProtocol.OUT_HEADER + PassthroughProtocol.INIT_OUT_SIZE, 8);
            long length = gather(iov, count, msg);
            if (length < 0) {
                closeRing();
                return FuseDevice.writev(devFd, iov, (int) count);
            }
            int flags2 = (offered ? PassthroughProtocol.FLAGS2_PASSTHROUGH : 0)
                    | (offeredRing ? PassthroughProtocol.FLAGS2_OVER_IO_URING : 0);
            long accepted = flags2 != 0 ? PassthroughProtocol.accept(msg, length, flags2) : -1;
            boolean ptAccepted = accepted > 0 && offered;
            if (ptAccepted) {
                // before the reply: once the kernel has it, another worker may receive the first OPEN at once, and an
                // open admitted before this would be served here, and keep its path so while it is open
                fs.passthrough().enable(new PassthroughOpens.Device() {
                    @Override
                    public int register(int blobFd) {
                        return FuseDevice.backingOpen(devFd, blobFd);
                    }

                    @Override
                    public int unregister(int id) {
                        return FuseDevice.backingClose(devFd, id);
                    }
                });
            }
            int r = FuseDevice.write(devFd, msg, accepted > 0 ? accepted : length);
            if (r == 0 && passthrough && !ptAccepted) {
                LOG.info("the kernel offers no FUSE passthrough (Linux 6.9+ with CONFIG_FUSE_PASSTHROUGH): modelfs serves every read");
            }
            if (r == 0 && accepted > 0 && offeredRing) {
                ring.start(ptAccepted);
            } else {
                closeRing();
            }
            return r;
        } catch (Throwable t) {
            closeRing();
            return -EIO;
        }
    }

    private void closeRing() {
        if (ring != null) {
            ring.close();
        }
    }

    /** Libfuse's OPEN reply, made a passthrough open when the open file holds a registration. */
    private int sendOpen(MemorySegment iov, long count) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment msg = a.allocate(PassthroughProtocol.OUT_HEADER + PassthroughProtocol.OPEN_OUT_SIZE, 8);
            long length = gather(iov, count, msg);
            if (length < 0 || !rewriteOpen(fs, msg, length)) {
                return FuseDevice.writev(devFd, iov, (int) count);
            }
            return FuseDevice.write(devFd, msg, length);
        } catch (Throwable t) {
            return -EIO;
        }
    }

    /**
     * Makes OPEN reply {@code msg} of {@code length} bytes a passthrough open when the file it opened holds a backing
     * registration of {@code fs}; false when it is not a successful OPEN reply (left as it was).
     */
    static boolean rewriteOpen(ModelFs fs, MemorySegment msg, long length) {
        long fh = PassthroughProtocol.openHandle(msg, length);
        if (fh < 0) {
            return false;
        }
        int id = fs.backingOf(fh);
        if (id > 0) {
            PassthroughProtocol.passThrough(msg, id);
        }
        return true;
    }

    /** Copies the {@code count} buffers of {@code iov} into {@code msg}: their length, or -1 when they do not fit. */
    static long gather(MemorySegment iov, long count, MemorySegment msg) {
        MemorySegment v = iov.reinterpret(IOVEC * count);
        long at = 0;
        for (long i = 0; i < count; i++) {
            MemorySegment base = v.get(ADDR, i * IOVEC);
            long n = v.get(ValueLayout.JAVA_LONG, i * IOVEC + 8);
            if (n < 0 || at + n > msg.byteSize()) {
                return -1;
            }
            MemorySegment.copy(base.reinterpret(n), 0, msg, at, n);
            at += n;
        }
        return at;
    }

    /** Destroys this class's channels (none for {@link #off}). */
    void close() {
        if (fs == null) {
            return;
        }
        try {
            CHAN_DESTROY.invokeExact(initChannel);
            CHAN_DESTROY.invokeExact(openChannel);
        } catch (Throwable t) {
            LOG.fine("fuse_chan_destroy: " + t);
        }
    }
}
