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
            // a blob that shrinks, and one that vanishes, under a reader in the middle of a converted file
            Blob a = Blob.of(store, "a"), b = Blob.of(store, "b");
            rightBytesOrAnErrno(readAcross(mnt.resolve("a/fp32/model.safetensors"), a::shrink), written.get("a"));
            rightBytesOrAnErrno(readAcross(mnt.resolve("b/fp32/model.safetensors"), b::remove), written.get("b"));
            a.restore();
            b.restore();                                                  // the blobs read again: served right, no remount
            awaitRight(() -> Files.readAllBytes(mnt.resolve("a/fp32/model.safetensors")), written.get("a"));
            awaitRight(() -> Files.readAllBytes(mnt.resolve("b/fp32/model.safetensors")), written.get("b"));
            assertTrue(m.process.isAlive(), m.log());
        }
    }

    @Test
    void nfsReadsOfAFailingBlobAreNfs3errIoAndTheModelHeals() throws Exception {
        CliNfs.requireClients();
        Path store = store();
        try (FaultFs lower = FaultFs.mount(store, tmp)) {
            lower.set("eio " + blobOf(store, "a") + " " + BAD + " " + (BAD + 1), "short " + blobOf(store, "b") + " 1000");
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
                byte[] shortB = c.walk(root, "b/fp32/model.safetensors");  // short reads: NFS3ERR_IO or the right bytes
                rightBytesOrAnErrno(nfsReadAcross(c, shortB, () -> { }), written.get("b"));
                lower.set("eio " + blobOf(store, "a") + " " + BAD + " " + (BAD + 1));
                F16Store.checkFp32(Files.write(tmp.resolve("nfs-b"), c.readAll(c.walk(root, "b/fp32/model.safetensors"), 1 << 20)),
                        written.get("b"));
                lower.set();
                F16Store.checkFp32(Files.write(tmp.resolve("nfs-a"), c.readAll(a, 1 << 20)), written.get("a"));
                // a blob that shrinks, and one that vanishes, between two READs of a converted file
                Blob blobA = Blob.of(store, "a"), blobC = Blob.of(store, "c");
                rightBytesOrAnErrno(nfsReadAcross(c, a, blobA::shrink), written.get("a"));
                rightBytesOrAnErrno(nfsReadAcross(c, c.walk(root, "c/fp32/model.safetensors"), blobC::remove), written.get("c"));
                blobA.restore();
                blobC.restore();
                awaitRight(() -> c.readAll(a, 1 << 20), written.get("a"));
                awaitRight(() -> c.readAll(c.walk(root, "c/fp32/model.safetensors"), 1 << 20), written.get("c"));
                // the store disconnects (a share that went away) and comes back: the listing follows, the model reads again
                lower.set("gone");
                awaitNfsListing(nfs, "");
                lower.set();
                awaitNfsListing(nfs, "a\nb\nc\nw");
                try {
                    awaitRight(() -> c.readAll(c.walk(c.mount("/").fh(), "a/fp32/model.safetensors"), 1 << 20), written.get("a"));
                } catch (AssertionError e) {
                    throw new AssertionError(e.getMessage() + "\n" + nfs.log(), e);
                }
                assertTrue(nfs.log().lines().noneMatch(l -> l.contains("Exception in thread")), nfs.log());
            }
        }
    }

    /**
     * A cache directory whose disk goes over quota, read-only and full (issue 35; SEMANTICS.md "When the cache
     * directory's disk fails"): a mount and an NFS server share one {@code --cache-dir} on faultfs; while its writes
     * fail with {@code EDQUOT}, {@code EROFS}, then {@code ENOSPC}, every read on the mount and over NFS gets the
     * right bytes, each daemon logs one line, and no chunk file (nor temporary) is left; once writes succeed again the
     * cache resumes (one line each, chunk files written whole: a new mount reads them back, the right bytes); the cache
     * directory removed while both serve is made again.
     */
    @Test
    void aCacheDiskOverQuotaReadOnlyOrFullLosesNoReadOnTheMountOrOverNfsAndResumes() throws Exception {
        CliNfs.requireClients();
        List<String> models = List.of("q1", "q2", "r1", "r2", "s1", "s2", "t1", "t2", "u1", "u2");
        Path store = written.write(tmp.resolve("store"), models, 64);
        Path cacheDisk = Files.createDirectories(tmp.resolve("cache-disk"));
        try (FaultFs disk = FaultFs.mount(cacheDisk, Files.createDirectories(tmp.resolve("cachefs")), true)) {
            Path dir = disk.mountpoint.resolve("chunks-dir");
            try (CliMount m = CliMount.start(store, tmp.resolve("mnt"), "--no-warmup", "--cache-dir", dir.toString());
                 CliNfs nfs = CliNfs.start(store, tmp.resolve("nfs.log"), CliNfs.freePort(), "--no-warmup", "--cache-dir", dir.toString());
                 NfsRpcClient c = new NfsRpcClient(nfs.port)) {
                byte[] root = c.mount("/").fh();
                String[] errnos = {"122", "30", "28"};                    // EDQUOT, EROFS, ENOSPC
                for (int i = 0; i < errnos.length; i++) {
                    disk.set("errno / " + errnos[i]);
                    String viaFuse = models.get(2 * i), viaNfs = models.get(2 * i + 1);
                    F16Store.checkFp32(copy(m.mountpoint.resolve(viaFuse + "/fp32/model.safetensors")), written.get(viaFuse));
                    F16Store.checkFp32(Files.write(tmp.resolve("nfs-" + viaNfs),
                            c.readAll(c.walk(root, viaNfs + "/fp32/model.safetensors"), 1 << 20)), written.get(viaNfs));
                }
                awaitLines(m::log, "cannot write cached chunk", 1);
                awaitLines(nfs::log, "cannot write cached chunk", 1);
                assertEquals(List.of(), chunkFiles(cacheDisk), "no chunk file written while the disk failed");
                disk.set();                                               // space returns
                F16Store.checkFp32(copy(m.mountpoint.resolve("t1/fp32/model.safetensors")), written.get("t1"));
                F16Store.checkFp32(Files.write(tmp.resolve("nfs-t2"), c.readAll(c.walk(root, "t2/fp32/model.safetensors"), 1 << 20)),
                        written.get("t2"));
                awaitLines(m::log, "the chunk cache directory takes chunks again", 1);
                awaitLines(nfs::log, "the chunk cache directory takes chunks again", 1);
                assertEquals(1, m.log().lines().filter(l -> l.contains("cannot write cached chunk")).count(), m.log());
                assertTrue(!chunkFiles(cacheDisk).isEmpty(), "the cache resumed");
                Path chunksDir = cacheDisk.resolve("chunks-dir");           // the cache directory removed while serving
                dev.modelfs.testing.Poll.until("the cache directory removed", java.time.Duration.ofSeconds(10), () -> {
                    try (Stream<Path> all = Files.walk(chunksDir)) {      // again while a queued write lands meanwhile
                        all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                    } catch (IOException | java.io.UncheckedIOException raced) {
                        // a file went away under the walk: looked at again
                    }
                    return !Files.exists(chunksDir);
                });
                F16Store.checkFp32(copy(m.mountpoint.resolve("u1/fp32/model.safetensors")), written.get("u1"));
                F16Store.checkFp32(Files.write(tmp.resolve("nfs-u2"), c.readAll(c.walk(root, "u2/fp32/model.safetensors"), 1 << 20)),
                        written.get("u2"));
                dev.modelfs.testing.Poll.until("the removed cache directory made again and written to", java.time.Duration.ofSeconds(10),
                        () -> !chunkFiles(cacheDisk).isEmpty());
            }
            try (CliMount again = CliMount.start(store, tmp.resolve("mnt2"), "--no-warmup", "--cache-dir", dir.toString())) {
                for (String t : List.of("t1", "t2", "u1", "u2")) {        // the chunk files written back are whole
                    F16Store.checkFp32(copy(again.mountpoint.resolve(t + "/fp32/model.safetensors")), written.get(t));
                }
                assertTrue(again.log().lines().noneMatch(l -> l.contains("cannot write cached chunk")), again.log());
            }
        }
    }

    private static List<Path> chunkFiles(Path cacheDisk) throws IOException {
        try (Stream<Path> s = Files.walk(cacheDisk)) {
            return s.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString().startsWith(".")).toList();
        }
    }

    @FunctionalInterface
    private interface Log {
        String read() throws IOException;
    }

    /** Waits (10 s at most) until {@code log} has exactly {@code n} lines containing {@code text}. */
    private static void awaitLines(Log log, String text, long n) throws InterruptedException {
        dev.modelfs.testing.Poll.until(n + " log line(s) '" + text + "'", java.time.Duration.ofSeconds(10),
                () -> log.read().lines().filter(l -> l.contains(text)).count() == n, () -> {
                    try {
                        return log.read();
                    } catch (IOException e) {
                        return e.toString();
                    }
                });
    }

    /** A blob of the store, kept so that the test can shrink or remove it and put it back. */
    private record Blob(Path path, byte[] bytes) {
        static Blob of(Path store, String model) throws IOException {
            Path p = store.resolve("blobs").resolve(blobOf(store, model));
            return new Blob(p, Files.readAllBytes(p));
        }

        void shrink() {
            try (var ch = java.nio.channels.FileChannel.open(path, java.nio.file.StandardOpenOption.WRITE)) {
                ch.truncate(bytes.length / 3);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        void remove() {
            try {
                Files.delete(path);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        void restore() throws IOException {
            Path t = path.resolveSibling(path.getFileName() + ".restore");
            Files.write(t, bytes);
            Files.move(t, path, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        }
    }

    /** Reads {@code f} through the mount, running {@code change} after its first 512 KiB; null when a read failed. */
    private static byte[] readAcross(Path f, Runnable change) {
        var out = new java.io.ByteArrayOutputStream();
        try (var in = Files.newInputStream(f)) {
            out.write(in.readNBytes(512 << 10));
            change.run();
            in.transferTo(out);
            return out.toByteArray();
        } catch (IOException e) {
            return null;                                                  // an errno: what the reader may get
        }
    }

    /** Reads NFS file {@code fh} in 256 KiB READs, running {@code change} after the first two; null when a READ failed. */
    private static byte[] nfsReadAcross(NfsRpcClient c, byte[] fh, Runnable change) throws IOException {
        var out = new java.io.ByteArrayOutputStream();
        for (long off = 0; ; off += 256 << 10) {
            if (off == 512 << 10) {
                change.run();
            }
            NfsRpcClient.Read r = c.read(fh, off, 256 << 10);
            assertTrue(r.status() == 0 || r.status() == 5 || r.status() == 70, "READ at " + off + ": status " + r.status());
            if (r.status() != 0) {
                return null;                                              // NFS3ERR_IO or NFS3ERR_STALE: an error, not bytes
            }
            out.write(r.data());
            if (r.eof()) {
                return out.toByteArray();
            }
        }
    }

    /** The bytes read are the fp32 file of {@code tensors}, or there were none (the read failed with an errno). */
    private void rightBytesOrAnErrno(byte[] got, java.util.Map<String, short[]> tensors) throws IOException {
        if (got != null) {
            F16Store.checkFp32(Files.write(tmp.resolve("across"), got), tensors);
        }
    }

    @FunctionalInterface
    private interface Reader {
        byte[] read() throws IOException;
    }

    /** Waits (10 s at most) until {@code r} reads the fp32 file of {@code tensors}: the model is served again. */
    private void awaitRight(Reader r, java.util.Map<String, short[]> tensors) throws InterruptedException {
        Throwable[] last = new Throwable[1];
        dev.modelfs.testing.Poll.until("the model reads right again", java.time.Duration.ofSeconds(10), () -> {
            try {
                F16Store.checkFp32(Files.write(tmp.resolve("again"), r.read()), tensors);
                return true;
            } catch (IOException | AssertionError | RuntimeException e) {
                last[0] = e;
                return false;
            }
        }, () -> "last: " + last[0]);
    }

    private static void awaitNfsListing(CliNfs nfs, String want) throws InterruptedException {
        dev.modelfs.testing.Poll.until("nfs-ls lists " + want, java.time.Duration.ofSeconds(10), () -> {
            CliNfs.Out o = CliNfs.run(10, "nfs-ls", nfs.url(""));
            String names = new String(o.stdout()).lines().map(l -> l.substring(l.lastIndexOf(' ') + 1)).sorted()
                    .filter(n -> !n.isEmpty() && !n.equals(".") && !n.equals("..")).collect(java.util.stream.Collectors.joining("\n"));
            return o.exit() == 0 && names.equals(want);
        });
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
