package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store whose disk fails (issue 35; SEMANTICS.md "When the store's disk fails"), on {@link FaultFs}: reads that
 * need a byte range the disk answers with {@code EIO}, or that the disk answers short (the kernel then takes the
 * file for shorter: a mapped page past it raises {@code SIGBUS}), fail with {@code EIO} alone, on a mount whose
 * conversion kernels the warm-up compiled (the Vector API's compiled loads are where a {@code SIGBUS} ended the
 * process); other models read on; a store that disconnects empties the tree and fills it again when it comes back;
 * and every model is served right again once its blobs read, without a remount. The oracle is the F16 values the test
 * wrote ({@link F16Store}).
 */
class FailingStoreTest {
    /** A byte of model a's blob inside its third tensor (the header and the first tensors read fine). */
    private static final long BAD = 600_000;

    @TempDir
    Path tmp;

    private final F16Store written = new F16Store();

    /** Models w (larger: the warm-up converts its tensors), a, b, c; returns the store. */
    private Path store() throws IOException {
        Path store = written.write(tmp.resolve("store"), List.of("w"), 512);
        return written.write(store, List.of("a", "b", "c"), 256);
    }

    private static String blobOf(Path store, String model) throws IOException {
        String m = Files.readString(store.resolve("manifests/registry.ollama.ai/library").resolve(model).resolve("latest"));
        int i = m.indexOf("sha256:", m.indexOf("\"layers\""));
        return "sha256-" + m.substring(i + 7, i + 7 + 64);
    }

    @Test
    void diskErrorsAndShortReadsFailThoseReadsAloneAndTheModelHealsWithoutARemount() throws Exception {
        Path store = store();
        try (FaultFs lower = FaultFs.mount(store, tmp)) {
            lower.set("eio " + blobOf(store, "a") + " " + BAD + " " + (BAD + 1), "short " + blobOf(store, "c") + " 1000");
            try (CliMount m = CliMount.start(lower.mountpoint, tmp.resolve("mnt"), "--threads", "2")) {
                Path mnt = m.mountpoint;
                for (String f : List.of("fp32", "bf16", "fp16")) {
                    IOException e = assertThrows(IOException.class, () -> Files.readAllBytes(mnt.resolve("a/" + f + "/model.safetensors")));
                    assertTrue(String.valueOf(e.getMessage()).contains("Input/output error"), f + ": " + e);
                }
                for (String f : List.of("bf16", "fp32", "fp16")) {         // short reads: EIO or the right bytes, never others
                    try {
                        byte[] got = Files.readAllBytes(mnt.resolve("c/" + f + "/model.safetensors"));
                        if (f.equals("fp32")) {
                            F16Store.checkFp32(Files.write(tmp.resolve("c-fp32"), got), written.get("c"));
                        }
                    } catch (IOException e) {
                        assertTrue(String.valueOf(e.getMessage()).contains("Input/output error"), f + ": " + e);
                    }
                }
                assertTrue(m.process.isAlive(), "modelfs survives the failing disk:\n" + m.log());
                F16Store.checkFp32(copy(mnt.resolve("b/fp32/model.safetensors")), written.get("b"));
                lower.set();                                              // the disk reads again
                F16Store.checkFp32(copy(mnt.resolve("a/fp32/model.safetensors")), written.get("a"));
                F16Store.checkFp32(copy(mnt.resolve("c/fp32/model.safetensors")), written.get("c"));
                assertEquals(1, m.log().lines().filter(l -> l.contains("read /a/fp32/model.safetensors")).count(),
                        "one log line for the failing file:\n" + m.log());
            }
        }
    }

    @Test
    void aStoreThatDisconnectsEmptiesTheTreeAndIsServedAgainWhenItComesBack() throws Exception {
        Path store = store();
        try (FaultFs lower = FaultFs.mount(store, tmp);
             CliMount m = CliMount.start(lower.mountpoint, tmp.resolve("mnt"), "--threads", "2", "--no-warmup")) {
            Path mnt = m.mountpoint;
            assertEquals(List.of("a", "b", "c", "w"), list(mnt));
            lower.set("gone");                                            // a share that went away
            awaitListing(mnt, List.of());
            lower.set();                                                  // and came back
            awaitListing(mnt, List.of("a", "b", "c", "w"));
            F16Store.checkFp32(copy(mnt.resolve("a/fp32/model.safetensors")), written.get("a"));
            assertTrue(m.process.isAlive(), m.log());
        }
    }

    @Test
    void nfsReadsOfAFailingBlobAreNfs3errIoAndTheModelHeals() throws Exception {
        CliNfs.requireClients();
        Path store = store();
        try (FaultFs lower = FaultFs.mount(store, tmp)) {
            lower.set("eio " + blobOf(store, "a") + " " + BAD + " " + (BAD + 1));
            try (CliNfs nfs = CliNfs.start(lower.mountpoint, tmp.resolve("nfs.log"), CliNfs.freePort());
                 NfsRpcClient c = new NfsRpcClient(nfs.port)) {
                byte[] root = c.mount("/").fh();
                byte[] a = c.walk(root, "a/fp32/model.safetensors");
                int failed = 0;
                for (long off = 0; off < 2L << 20; off += 1 << 20) {
                    NfsRpcClient.Read r = c.read(a, off, 1 << 20);
                    failed += r.status() == 5 ? 1 : 0;                    // NFS3ERR_IO
                    assertTrue(r.status() == 0 || r.status() == 5, "READ at " + off + ": status " + r.status());
                }
                assertTrue(failed > 0, "a READ of the failing range is NFS3ERR_IO");
                F16Store.checkFp32(Files.write(tmp.resolve("nfs-b"), c.readAll(c.walk(root, "b/fp32/model.safetensors"), 1 << 20)),
                        written.get("b"));
                lower.set();
                F16Store.checkFp32(Files.write(tmp.resolve("nfs-a"), c.readAll(a, 1 << 20)), written.get("a"));
            }
        }
    }

    private Path copy(Path f) throws IOException {
        return Files.write(tmp.resolve("copy"), Files.readAllBytes(f));
    }

    private static void awaitListing(Path dir, List<String> want) throws InterruptedException {
        dev.modelfs.testing.Poll.until(dir + " lists " + want, java.time.Duration.ofSeconds(10), () -> list(dir).equals(want),
                () -> "it lists " + safeList(dir));
    }

    private static String safeList(Path dir) {
        try {
            return list(dir).toString();
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static List<String> list(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
