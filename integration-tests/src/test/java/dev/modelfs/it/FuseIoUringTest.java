package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * FUSE over io_uring ({@code --io-uring}, docs/DESIGN.md §3.1): with the kernel's consent ({@code fuse.enable_uring},
 * which this test gives as root and puts back afterwards) every request but FORGET and INTERRUPT comes through the
 * mount's rings. The whole tree then lists and reads as on {@code /dev/fuse}: the tree checker and the converted
 * files' checker (numpy, gguf-py and safetensors are their oracles) pass, a whole-blob file gives its blob's bytes
 * and is opened with kernel passthrough (an OPEN reply rewritten on its way through the ring), {@code O_DIRECT}
 * 4 KiB reads give the blob's bytes, the metrics count the requests that came through the ring, and the mount stops
 * cleanly, also when unmounted under a reader, which reads on through the rings to the end. Without the kernel's consent the mount says how to give it and serves through {@code /dev/fuse}.
 * Fails when this kernel has no FUSE over io_uring (Linux 6.14+ with {@code CONFIG_FUSE_IO_URING}).
 */
class FuseIoUringTest {
    private static final Path ENABLE = Path.of("/sys/module/fuse/parameters/enable_uring");
    private static String before;

    @TempDir
    Path tmp;

    @BeforeAll
    static void remember() throws IOException {
        assertTrue(Files.exists(ENABLE), ENABLE + " is missing: this kernel has no FUSE over io_uring (Linux 6.14+)");
        before = Files.readString(ENABLE).trim();
    }

    @AfterAll
    static void restore() throws IOException {
        if (before != null) {
            Files.writeString(ENABLE, before.equals("Y") ? "Y" : "N");
        }
    }

    private static void kernelAllows(boolean allow) throws IOException {
        Files.writeString(ENABLE, allow ? "Y" : "N");           // root only: the test needs it and says so when refused
        assertEquals(allow ? "Y" : "N", Files.readString(ENABLE).trim());
    }

    @Test
    void theWholeTreeListsAndReadsThroughTheRings() throws Exception {
        kernelAllows(true);
        Path store = Fixture.store();
        try (CliMount m = CliMount.start(store, tmp.resolve("mnt"), "--io-uring", "--metrics", "127.0.0.1:0", "--no-warmup")) {
            assertTrue(m.log().contains("fuse-over-io_uring: "), "the rings started:\n" + m.log());
            m.requireChecker(600, "check_tree.py", Fixture.dir().toString());
            double first = KernelPassthroughTest.metric(m, "modelfs_fuse_io_uring_requests_total");
            assertTrue(first > 100, "the tree's lookups, listings and reads came through the rings: " + first);
            m.requireChecker(900, "check_views.py", Fixture.dir().toString());

            Path whole = m.mountpoint.resolve("tinyllama/model.gguf");
            byte[] bytes = Files.readAllBytes(whole);
            byte[] blob = Files.readAllBytes(KernelPassthroughTest.blobOf(store, bytes));
            assertArrayEquals(blob, bytes);
            assertTrue(KernelPassthroughTest.metric(m, "modelfs_kernel_passthrough_opens_total") >= 1,
                    "an OPEN answered through a ring still hands a whole-blob file to the kernel");
            SmallReadsTest.assertDirectReadsMatch(whole, blob);
            SmallReadsTest.assertDirectReadsMatch(m.mountpoint.resolve("tinyllama/model.fp32.gguf"),
                    Files.readAllBytes(m.mountpoint.resolve("tinyllama/model.fp32.gguf")));

            double after = KernelPassthroughTest.metric(m, "modelfs_fuse_io_uring_requests_total");
            assertTrue(after > first + 600, "every read above came through the rings: " + first + " -> " + after);
            assertFalse(m.log().contains("SEVERE") || m.log().contains("fuse-over-io_uring: entry"), m.log());
        }
    }

    /**
     * {@code modelfs unmount} while a file modelfs serves through the rings is half read: the mount is detached, the
     * reader reads on through the rings to the blob's end, and once it closes the file the kernel ends the rings'
     * entries, their threads end and the process exits 0.
     */
    @Test
    void aReaderReadsOnThroughTheRingsAfterUnmountAndTheProcessThenEnds() throws Exception {
        kernelAllows(true);
        Path blob = SmallStore.addModel(tmp.resolve("store"), "big", 24 << 20, 7);
        CliMount m = CliMount.start(tmp.resolve("store"), tmp.resolve("mnt"), "--io-uring", "--no-kernel-passthrough",
                "--no-warmup", "--metrics", "127.0.0.1:0");
        try (java.io.InputStream in = Files.newInputStream(m.mountpoint.resolve("big/model.gguf"))) {
            java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
            got.write(in.readNBytes(5 << 20));
            double before = KernelPassthroughTest.metric(m, "modelfs_fuse_io_uring_requests_total");
            assertTrue(before >= 40, "5 MiB read through the rings (128 KiB requests at most): " + before);
            Env.Run un = Env.run(60, CliMount.command("unmount", "--wait", "1", m.mountpoint.toString()));
            assertEquals(0, un.exit(), un.output());
            assertFalse(dev.modelfs.fuse.MountTable.isMounted(m.mountpoint), "no new path reaches the mount");
            got.write(in.readAllBytes());
            assertArrayEquals(Files.readAllBytes(blob), got.toByteArray(), "the reader got the blob's bytes to the end");
            assertTrue(KernelPassthroughTest.metric(m, "modelfs_fuse_io_uring_requests_total") >= before + 100,
                    "the last 19 MiB came through the rings after the unmount too");
        }
        assertTrue(m.process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "exits once the file is closed:\n" + m.log());
        assertEquals(0, m.process.exitValue(), m.log());
        assertTrue(m.log().contains("fuse-over-io_uring: "), m.log());
        assertFalse(m.log().contains("SEVERE"), m.log());
    }

    @Test
    void withoutTheKernelsConsentTheMountSaysHowToGiveItAndServesThroughDevFuse() throws Exception {
        kernelAllows(false);
        Path store = Fixture.store();
        try (CliMount m = CliMount.start(store, tmp.resolve("mnt"), "--io-uring", "--metrics", "127.0.0.1:0", "--no-warmup")) {
            assertTrue(m.log().contains("/sys/module/fuse/parameters/enable_uring"), m.log());
            byte[] bytes = Files.readAllBytes(m.mountpoint.resolve("tinyllama/model.gguf"));
            assertArrayEquals(Files.readAllBytes(KernelPassthroughTest.blobOf(store, bytes)), bytes);
            assertEquals(0, KernelPassthroughTest.metric(m, "modelfs_fuse_io_uring_requests_total"));
        }
    }
}
