package dev.modelfs.telemetry;

import java.net.InetAddress;
import java.util.Optional;

/**
 * Where the front ends (FUSE, NFS) and the read path report what they serve: the sink behind the
 * metrics. The package depends on nothing else of modelfs, so any layer may report; the implementation
 * (Prometheus, in the command) is wired in where the command builds the served tree.
 *
 * <p>Invariants: implementations are thread-safe; {@link #read}, {@link #conversion} and
 * {@link #nfsCall} allocate nothing per call once a label combination has been seen (they run on the hot
 * path); {@link #NONE} ignores everything.
 */
public interface Telemetry {
    /** Reports nothing: the default when no metrics are asked for. */
    Telemetry NONE = new Telemetry() {
        @Override
        public void read(FileKind kind, long bytes, long nanos) {
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
    };

    /** A read of a file of {@code kind} answered with {@code bytes} bytes (0 at end of file) in {@code nanos}. */
    void read(FileKind kind, long bytes, long nanos);

    /** One chunk of converted bytes computed, using {@code cpuNanos} of the computing thread's CPU time. */
    void conversion(long cpuNanos);

    /**
     * A failed operation (the one logged line of docs/SEMANTICS.md): {@code errno} is its name
     * ({@code ENOENT}, {@code EACCES}, {@code EIO}); {@code model} the model directory it concerns (its path
     * in the tree, e.g. {@code llama3.2:1b}), or {@link #NO_MODEL}.
     */
    void error(String errno, String model);

    /** An NFSv3 call of procedure number {@code procedure} (RFC 1813) from {@code client} (null when unknown). */
    void nfsCall(int procedure, InetAddress client);

    /**
     * A FUSE open handed to the kernel's passthrough: the file is one whole blob, and its reads go from the blob's
     * page cache to the reader without reaching this process, so they appear in no {@link #read} figure.
     */
    default void kernelPassthroughOpen() {
    }

    /** A FUSE request that came through io_uring instead of {@code /dev/fuse} (a mount with {@code --io-uring}). */
    default void fuseRingRequest() {
    }

    /**
     * Where these figures can be read ({@code HOST:PORT} of the Prometheus endpoint), if anywhere: a mount
     * shows it as the root's {@code user.modelfs.metrics} attribute, which {@code modelfs status} reads.
     */
    default Optional<String> endpoint() {
        return Optional.empty();
    }

    /** The model label of a failure that concerns no model (the root, namespace folders). */
    String NO_MODEL = "-";
}
