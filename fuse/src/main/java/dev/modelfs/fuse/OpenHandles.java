package dev.modelfs.fuse;

import dev.modelfs.read.OpenedSource;
import dev.modelfs.serve.ServePolicy;
import dev.modelfs.telemetry.FileKind;
import dev.modelfs.tree.FileNode;
import java.io.IOException;

/**
 * The mount's open files, by FUSE file handle: what each was opened as, its leased bytes, and its kernel passthrough
 * registration ({@link PassthroughOpens}).
 *
 * <p>Invariants: a handle holds its {@link OpenedSource} from open to release (an open file keeps serving the bytes of
 * the snapshot it was opened in); an open that fails or is refused holds nothing; a handle is released once.
 */
final class OpenHandles {
    /** What {@link #open} answers when the kernel's passthrough refused the open (EBUSY). */
    static final long BUSY = -1;

    /**
     * An open file: the path and node it was opened as (its attributes), its leased bytes, and its blob's kernel
     * passthrough registration, or 0 when this process serves its reads.
     */
    record Handle(String path, FileNode node, OpenedSource source, int backing) {}

    private final HandleTable<Handle> open = new HandleTable<>();
    private final PassthroughOpens passthrough;

    OpenHandles(PassthroughOpens passthrough) {
        this.passthrough = passthrough;
    }

    /**
     * Opens file {@code f} at {@code path} as {@code policy} serves it ({@code direct}: the open asked for
     * {@code O_DIRECT}); returns its handle, or {@link #BUSY}.
     */
    long open(ServePolicy policy, String path, FileNode f, boolean direct) throws IOException {
        OpenedSource src = policy.open(f);
        int backing;
        try {
            backing = passthrough.admit(path, src.kind() == FileKind.PASSTHROUGH ? src.blobFile(0) : null, direct,
                    () -> src.blobDescriptor(0));
        } catch (RuntimeException e) {
            src.close();
            throw e;
        }
        if (backing == PassthroughOpens.BUSY) {
            src.close();
            return BUSY;
        }
        return open.add(new Handle(path, f, src, backing));
    }

    /** The open file behind {@code fh}, or null. */
    Handle get(long fh) {
        return open.get(fh);
    }

    /** Releases {@code fh}: its passthrough registration and its bytes. An unknown handle is ignored. */
    void release(long fh) {
        Handle h = open.remove(fh);
        if (h != null) {
            passthrough.closed(h.path(), h.backing());
            h.source().close();
        }
    }

    /** Files open now. */
    int size() {
        return open.size();
    }
}
