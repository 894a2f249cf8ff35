package dev.modelfs.telemetry;

import java.net.InetAddress;
import java.util.Optional;

/**
 * A {@link Telemetry} that passes reports on only once {@link #open()}ed: a server's own warm-up traffic before it
 * is ready (a loopback client of {@code modelfs nfs}) is not a client's and counts in no metric.
 *
 * <p>Invariants: before {@link #open()} every report is dropped; after it every report reaches the delegate;
 * {@link #endpoint()} is always the delegate's. Thread-safe.
 */
public final class GatedTelemetry implements Telemetry {
    private final Telemetry delegate;
    /**
     * {@link Telemetry#NONE} until {@link #open()}, then the delegate. A reference swapped once rather than a flag
     * tested per report: the warm-up's reads make the JIT compile the read path with the flag always false, and the
     * first client read after opening would then hit an untaken branch and throw the compiled read path away
     * (an uncommon trap, then tens of milliseconds interpreted and recompiling, in that first read).
     */
    private volatile Telemetry target = Telemetry.NONE;

    private GatedTelemetry(Telemetry delegate) {
        this.delegate = delegate;
    }

    /** A gate in front of {@code delegate}, closed. */
    public static GatedTelemetry closed(Telemetry delegate) {
        return new GatedTelemetry(delegate);
    }

    /** From now on, reports reach the delegate. */
    public void open() {
        target = delegate;
    }

    @Override
    public void read(FileKind kind, long bytes, long nanos) {
        target.read(kind, bytes, nanos);
    }

    @Override
    public void conversion(long cpuNanos) {
        target.conversion(cpuNanos);
    }

    @Override
    public void error(String errno, String model) {
        target.error(errno, model);
    }

    @Override
    public void kernelPassthroughOpen() {
        target.kernelPassthroughOpen();
    }

    @Override
    public void fuseRingRequest() {
        target.fuseRingRequest();
    }

    @Override
    public void nfsCall(int procedure, InetAddress client) {
        target.nfsCall(procedure, client);
    }

    @Override
    public Optional<String> endpoint() {
        return delegate.endpoint();
    }
}
