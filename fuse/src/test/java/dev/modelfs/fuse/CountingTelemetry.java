package dev.modelfs.fuse;

import dev.modelfs.telemetry.FileKind;
import dev.modelfs.telemetry.Telemetry;
import java.net.InetAddress;
import java.util.concurrent.atomic.AtomicLong;

/** A {@link Telemetry} for tests that counts reads and FUSE requests through io_uring, and ignores the rest. */
final class CountingTelemetry implements Telemetry {
    final AtomicLong reads = new AtomicLong();
    final AtomicLong ringRequests = new AtomicLong();

    @Override
    public void read(FileKind kind, long bytes, long nanos) {
        reads.incrementAndGet();
    }

    @Override
    public void fuseRingRequest() {
        ringRequests.incrementAndGet();
    }

    @Override
    public void conversion(long cpuNanos) {
    }

    @Override
    public void error(String errno, String model) {
    }

    @Override
    public void nfsCall(int procedure, InetAddress client) {
    }
}
