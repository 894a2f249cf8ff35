package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.store.Digest;
import dev.modelfs.store.OllamaStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each blob's verdict, with digests computed here by the JDK's SHA-256; a blob of several 1 MiB pieces. */
class BlobCheckTest {
    @TempDir
    Path root;

    Digest put(String name, byte[] content) throws Exception {
        Digest d = new Digest(name != null ? name : HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content)));
        Files.write(root.resolve("blobs").resolve(d.fileName()), content);
        return d;
    }

    @Test
    void intactCorruptAndMissingBlobs() throws Exception {
        Files.createDirectories(root.resolve("blobs"));
        byte[] big = new byte[(5 << 20) / 2];
        new Random(1).nextBytes(big);
        Digest intact = put(null, big);
        Digest corrupt = put("0".repeat(63) + "1", new byte[] {1, 2, 3});
        Digest missing = new Digest("2".repeat(64));
        BlobCheck check = new BlobCheck(new OllamaStore(root), 2);
        Map<Digest, BlobCheck.Result> r = check.check(List.of(missing, intact, corrupt, intact));
        assertEquals(List.of(missing, intact, corrupt), List.copyOf(r.keySet()), "each digest once, in the order given");
        assertEquals(BlobCheck.State.INTACT, r.get(intact).state());
        assertEquals(big.length, r.get(intact).size());
        assertEquals(BlobCheck.State.CORRUPT, r.get(corrupt).state());
        String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(new byte[] {1, 2, 3}));
        assertTrue(r.get(corrupt).detail().contains(sha), r.get(corrupt).detail());
        assertEquals(BlobCheck.State.MISSING, r.get(missing).state());
        assertEquals(-1, r.get(missing).size());
        assertEquals(big.length + 3, check.bytesDone(), "every byte read is counted once");
    }
}
