package dev.modelfs.cache;

import java.io.IOException;
import java.nio.file.Path;

/** A blob file's size differs from what its manifest promises (truncated or corrupt download). */
public final class BlobSizeMismatchException extends IOException {
    public BlobSizeMismatchException(Path path, long expected, long actual) {
        super(path.getFileName() + ": size " + actual + ", manifest says " + expected);
    }
}
