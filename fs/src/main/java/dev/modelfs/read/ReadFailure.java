package dev.modelfs.read;

import dev.modelfs.cache.BlobSizeMismatchException;
import dev.modelfs.cache.UntrustedFileException;
import java.io.IOException;
import java.nio.file.NoSuchFileException;

/**
 * A failed open or read of a file of the tree, carrying the {@link Errno} to report. {@link #of} is
 * the one translation of failures into errnos, so adapters (FUSE, NFS) need not know which layer
 * threw what.
 *
 * <p>Invariants: {@link #errno()} is never null; {@link #getMessage()} is one log line naming the cause.
 */
public final class ReadFailure extends IOException {
    private final Errno errno;

    public ReadFailure(Errno errno, String message, Throwable cause) {
        super(message, cause);
        this.errno = errno;
    }

    /**
     * The failure {@code t} is: a missing blob is {@link Errno#ENOENT}; a linked blob the store's owner
     * does not own {@link Errno#EACCES}; a blob of the wrong size and
     * anything else (I/O errors, a blob truncated under its mapping, bugs) is {@link Errno#EIO}.
     */
    public static ReadFailure of(Throwable t) {
        return switch (t) {
            case ReadFailure f -> f;
            case NoSuchFileException e -> new ReadFailure(Errno.ENOENT, "blob missing " + e.getMessage(), e);
            case BlobSizeMismatchException e -> new ReadFailure(Errno.EIO, e.getMessage(), e);
            case UntrustedFileException e -> new ReadFailure(Errno.EACCES, e.getMessage(), e);
            default -> new ReadFailure(Errno.EIO, t.toString(), t);
        };
    }

    public Errno errno() {
        return errno;
    }
}
