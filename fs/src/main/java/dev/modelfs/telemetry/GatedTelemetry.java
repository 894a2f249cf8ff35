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
    private volatile boolean open;

    private GatedTelemetry(Telemetry delegate) {
        this.delegate = delegate;
    }

    /** A gate in front of {@code delegate}, closed. */
    public static GatedTelemetry closed(Telemetry delegate) {
        return new GatedTelemetry(delegate);
    }

    /** From now on, reports reach the delegate. */
    public void open() {
        open = true;
    }

    @Override
    public void read(FileKind kind, long bytes, long nanos) {
        if (open) {
            delegate.read(kind, bytes, nanos);
        }
    }

    @Override
    public void conversion(long cpuNanos) {
        if (open) {
            delegate.conversion(cpuNanos);
        }
    }

    @Override
    public void error(String errno, String model) {
        if (open) {
            delegate.error(errno, model);
        }
    }

    @Override
    public void nfsCall(int procedure, InetAddress client) {
        if (open) {
            delegate.nfsCall(procedure, client);
        }
    }

    @Override
    public Optional<String> endpoint() {
        return delegate.endpoint();
    }
}
