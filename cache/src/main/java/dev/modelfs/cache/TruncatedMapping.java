package dev.modelfs.cache;

import java.io.IOException;

/**
 * The one translation of a fault on a mapped blob whose file shrank: the JVM turns the {@code SIGBUS}
 * into an {@link InternalError}, which every reader of a mapping reports as this {@link IOException}
 * (EIO to a client).
 */
public final class TruncatedMapping {
    private TruncatedMapping() {}

    /** The failure of {@code what} (e.g. "blob 1a2b3c… while converting") after the fault {@code e}. */
    public static IOException of(String what, InternalError e) {
        return new IOException(what + ": blob became unreadable (truncated while mapped): " + e.getMessage(), e);
    }
}
