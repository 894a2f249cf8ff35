package dev.modelfs.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.cache.BlobSizeMismatchException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** {@link ReadFailure#of}: the errno of each kind of failure (docs/SEMANTICS.md), and a log line naming the cause. */
class ReadFailureTest {

    @Test
    void aMissingBlobIsEnoent() {
        ReadFailure f = ReadFailure.of(new NoSuchFileException("sha256-ab", null, "blob missing"));
        assertEquals(Errno.ENOENT, f.errno());
        assertTrue(f.getMessage().contains("sha256-ab"), f.getMessage());
    }

    @Test
    void aBlobOfTheWrongSizeIsEio() {
        ReadFailure f = ReadFailure.of(new BlobSizeMismatchException(Path.of("blobs/sha256-cd"), 100, 90));
        assertEquals(Errno.EIO, f.errno());
        assertTrue(f.getMessage().contains("sha256-cd") && f.getMessage().contains("100"), f.getMessage());
    }

    @Test
    void everythingElseIsEio() {
        assertEquals(Errno.EIO, ReadFailure.of(new IOException("truncated while mapped")).errno());
        assertEquals(Errno.EIO, ReadFailure.of(new UncheckedIOException(new NoSuchFileException("x"))).errno());
        assertEquals(Errno.EIO, ReadFailure.of(new IllegalStateException("read after close")).errno());
        assertTrue(ReadFailure.of(new IllegalStateException("read after close")).getMessage().contains("IllegalStateException"));
    }

    @Test
    void aReadFailureKeepsItsErrno() {
        ReadFailure f = new ReadFailure(Errno.ENOENT, "gone", null);
        assertSame(f, ReadFailure.of(f));
    }
}
