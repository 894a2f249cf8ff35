package dev.modelfs.cache;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A blob that is a regular file but must not be served: reached through a symbolic link, or with
 * other hard links, and owned by someone other than the store's owner (docs/SEMANTICS.md, "Trust and
 * integrity"). The message is one log line naming the file and why.
 */
public final class UntrustedFileException extends IOException {
    public UntrustedFileException(Path path, String reason) {
        super(path.getFileName() + ": refused, " + reason);
    }
}
