package dev.modelfs.bytes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.modelfs.cache.BlobLease;
import dev.modelfs.cache.BlobMappings;
import dev.modelfs.cache.BlobSizeMismatchException;
import dev.modelfs.store.Digest;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The store's resolver maps a blob of the promised size, and refuses a missing or wrongly sized one. */
class BlobResolverTest {
    @TempDir
    Path root;

    @Test
    void mapsTheStoresBlobAndChecksItsSize() throws IOException {
        Files.createDirectories(root.resolve("blobs"));
        Files.createDirectories(root.resolve("manifests"));
        Digest d = new Digest("1".repeat(64));
        Files.write(root.resolve("blobs").resolve(d.fileName()), new byte[] {10, 20, 30, 40});
        try (BlobMappings mappings = new BlobMappings(2)) {
            BlobResolver r = BlobResolver.forStore(new OllamaStore(root), mappings);
            try (BlobLease lease = r.acquire(new BlobRef(d, 4))) {
                assertEquals(4, lease.segment().byteSize());
                assertEquals(30, lease.segment().get(ValueLayout.JAVA_BYTE, 2));
            }
            assertThrows(BlobSizeMismatchException.class, () -> r.acquire(new BlobRef(d, 5)).close());
            assertThrows(NoSuchFileException.class, () -> r.acquire(new BlobRef(new Digest("2".repeat(64)), 4)).close());
        }
    }
}
