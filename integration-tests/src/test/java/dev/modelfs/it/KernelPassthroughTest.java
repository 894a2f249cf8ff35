package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kernel passthrough (docs/SEMANTICS.md "Kernel passthrough"): on this machine's kernel (Linux 6.9+ with
 * {@code CONFIG_FUSE_PASSTHROUGH}, the test runs as root) a file that is one whole blob is opened with
 * {@code FOPEN_PASSTHROUGH}, so its reads and maps never reach modelfs: the blob's bytes arrive (gguf-py's memmap,
 * mmap, pread on two descriptors: {@code check_passthrough.py}), the metrics count the opens and no bytes served by
 * modelfs (an {@code O_DIRECT} open excepted: modelfs serves it), and {@code --no-kernel-passthrough} brings the
 * reads back to modelfs. A tag re-pulled while a reader holds
 * the old version open is refused with EBUSY until that reader closes (the kernel allows one backing file per open
 * inode). Fails when the kernel turns passthrough down: the mount log then says why.
 */
class KernelPassthroughTest {
    @TempDir
    Path tmp;

    private static final Pattern METRICS_AT = Pattern.compile("metrics at http://(\\S+)/metrics");

    /** The value of the sample {@code name} (with its labels, as written in the text format) at the mount's endpoint. */
    static double metric(CliMount m, String name) throws IOException, InterruptedException {
        Matcher at = METRICS_AT.matcher(m.log());
        assertTrue(at.find(), m.log());
        String text = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://" + at.group(1) + "/metrics"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
        for (String line : text.lines().toList()) {
            if (line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError(name + " is not among the metrics:\n" + text);
    }

    /** The blob a file's bytes name: {@code blobs/sha256-<hex of the bytes>} must exist (an oracle independent of modelfs). */
    static Path blobOf(Path store, byte[] bytes) throws Exception {
        Path blob = store.resolve("blobs/sha256-" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)));
        assertTrue(Files.isRegularFile(blob), "no blob holds the bytes read: " + blob);
        return blob;
    }

    @Test
    void aWholeBlobFileIsReadByTheKernelFromItsBlob() throws Exception {
        Path store = Fixture.store();
        try (CliMount m = CliMount.start(store, tmp.resolve("mnt"), "--metrics", "127.0.0.1:0", "--no-warmup")) {
            Path gguf = m.mountpoint.resolve("tinyllama/model.gguf");
            byte[] bytes = Files.readAllBytes(gguf);
            Path blob = blobOf(store, bytes);
            assertArrayEquals(Files.readAllBytes(blob), bytes);

            Env.Run check = Env.python(300, "check_passthrough.py", gguf.toString(), blob.toString());
            assertEquals(0, check.exit(), check.output() + "\n" + m.log());
            assertTrue(check.output().contains("OK "), check.output());

            double opens = metric(m, "modelfs_kernel_passthrough_opens_total");
            assertTrue(opens >= 5, "Java's read, gguf-py's, the mmap and two pread descriptors each opened it: " + opens
                    + "\n" + m.log());
            assertEquals(0, metric(m, "modelfs_read_bytes_total{kind=\"passthrough\"}"),
                    "not one byte of a whole-blob file went through modelfs");

            Env.Run direct = Env.run(60, java.util.List.of("dd", "if=" + gguf, "of=/dev/null", "bs=4096", "count=16", "iflag=direct"));
            assertEquals(0, direct.exit(), direct.output());
            assertEquals(16 * 4096, metric(m, "modelfs_read_bytes_total{kind=\"passthrough\"}"),
                    "an O_DIRECT open is served by modelfs (passthrough would send it to the disk)");
            assertEquals(opens, metric(m, "modelfs_kernel_passthrough_opens_total"), "and is not handed to the kernel");

            long converted = Files.readAllBytes(m.mountpoint.resolve("tinyllama/model.fp32.gguf")).length;
            assertEquals(converted, metric(m, "modelfs_read_bytes_total{kind=\"converted\"}"),
                    "every other file is still served by modelfs");
        }
    }

    @Test
    void withNoKernelPassthroughModelfsServesWholeBlobFilesItself() throws Exception {
        Path store = Fixture.store();
        try (CliMount m = CliMount.start(store, tmp.resolve("mnt"), "--metrics", "127.0.0.1:0", "--no-warmup",
                "--no-kernel-passthrough")) {
            byte[] bytes = Files.readAllBytes(m.mountpoint.resolve("tinyllama/model.gguf"));
            assertArrayEquals(Files.readAllBytes(blobOf(store, bytes)), bytes);
            assertEquals(bytes.length, metric(m, "modelfs_read_bytes_total{kind=\"passthrough\"}"));
            assertEquals(0, metric(m, "modelfs_kernel_passthrough_opens_total"));
        }
    }

    @Test
    void aTagRePulledWhileItsOldVersionIsOpenIsBusyUntilThatReaderCloses() throws Exception {
        Path store = tmp.resolve("store");
        byte[] v1 = new byte[3 << 20];
        byte[] v2 = new byte[(3 << 20) + 4096];
        new java.util.Random(1).nextBytes(v1);
        new java.util.Random(2).nextBytes(v2);
        SmallStore.addModel(store, "m", v1);
        try (CliMount m = CliMount.start(store, tmp.resolve("mnt"), "--no-warmup")) {
            Path file = m.mountpoint.resolve("m/model.gguf");
            try (FileChannel old = FileChannel.open(file)) {
                SmallStore.addModel(store, "m", v2);                        // ollama pull: a new blob under the same tag
                MountTreeTest.awaitTrue("the new version listed", () -> MountTreeTest.sizeOrMinus1(file) == v2.length);
                FileSystemException busy = assertThrows(FileSystemException.class, () -> Files.readAllBytes(file));
                assertTrue(String.valueOf(busy.getReason()).contains("busy"), busy.toString());
                assertTrue(m.log().contains("m/model.gguf: its bytes changed while 1 reader(s) still hold the old ones open"),
                        m.log());

                ByteBuffer b = ByteBuffer.allocate(v1.length);
                while (b.hasRemaining() && old.read(b, b.position()) > 0) {
                    // the old reader reads on
                }
                assertArrayEquals(v1, b.array(), "the old reader still reads the version it opened");
            }
            assertArrayEquals(v2, Files.readAllBytes(file), "once it closed, the new version opens");
        }
    }
}
