package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21's hostile store: GGUFs with 1,000,000 tiny tensors each (under the parser's 2^20 cap) used
 * to take the daemon to gigabytes and its listings to tens of seconds. With the table budget
 * (docs/SEMANTICS.md "Memory bounds") such a model is refused before its header is parsed: its
 * {@code model.gguf} is still served byte for byte, its converted files are absent with one log line,
 * the other models are listed and read as before, and the daemon's resident memory stays bounded.
 */
class MemoryBudgetTest {
    /** The mount's whole resident memory (JVM, mappings, 64 MiB chunk cache) after all of it. */
    private static final long RSS_BOUND_KIB = 400 * 1024;
    private static final int TENSORS = 1_000_000;

    @TempDir
    Path tmp;

    @Test
    void millionTensorGgufsAreRefusedWithinBoundedMemoryAndOthersStayServed() throws Exception {
        Path store = tmp.resolve("store");
        byte[] hostile = ggufWithTinyTensors(TENSORS);
        Path hostileBlob = SmallStore.addModel(store, "hostile-a", hostile);
        hostile[hostile.length - 1] ^= 1;                      // a second blob, another digest
        SmallStore.addModel(store, "hostile-b", hostile);
        Path good = SmallStore.addModel(store, "good", 1 << 20, 7);
        try (CliMount m = CliMount.start(store, tmp.resolve("mnt"), "--cache-size", "64M")) {
            assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
                for (String model : List.of("hostile-a", "hostile-b")) {
                    assertEquals(List.of("model.gguf", "ollama"), list(m.mountpoint.resolve(model)),
                            model + ": only the blob itself and the ollama/ files, no converted files");
                }
                assertEquals(List.of("model.gguf", "ollama"), list(m.mountpoint.resolve("good")));
                assertArrayEquals(Files.readAllBytes(good), Files.readAllBytes(m.mountpoint.resolve("good/model.gguf")));
            });
            assertArrayEquals(sha256(Files.readAllBytes(hostileBlob)),
                    sha256(Files.readAllBytes(m.mountpoint.resolve("hostile-a/model.gguf"))), "served byte for byte");
            long lines = m.log().lines().filter(l -> l.contains("over the per-model memory budget: " + TENSORS + " tensors")).count();
            assertEquals(2, lines, "one log line per hostile model:\n" + m.log());
            long rss = Env.rssKib(m.process.pid());
            assertTrue(rss < RSS_BOUND_KIB, "the mount's RSS is " + rss + " KiB");
        }
    }

    private static List<String> list(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    /** A valid GGUF v3 (as gguf-py writes it): one KV, {@code n} F32 tensors of 8 elements, 32-byte aligned. */
    static byte[] ggufWithTinyTensors(int n) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(n * 72 + 64);
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(0x46554747).putInt(3).putLong(n).putLong(1);
        out.write(b.array(), 0, b.position());
        string(out, "general.architecture");
        out.writeBytes(le(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(8)));   // STRING
        string(out, "hostile");
        for (int i = 0; i < n; i++) {
            string(out, "t." + i);
            out.writeBytes(le(ByteBuffer.allocate(28).order(ByteOrder.LITTLE_ENDIAN)
                    .putInt(1).putLong(8).putInt(0).putLong(32L * i)));          // n_dims, ne[0], F32, offset
        }
        out.writeBytes(new byte[(32 - out.size() % 32) % 32]);
        out.writeBytes(new byte[32 * n]);
        return out.toByteArray();
    }

    private static void string(ByteArrayOutputStream out, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeBytes(le(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(b.length)));
        out.writeBytes(b);
    }

    private static byte[] le(ByteBuffer b) {
        return b.array();
    }

    private static byte[] sha256(byte[] b) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(b);
    }

}
