package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store whose disk stalls (issue 35; SEMANTICS.md "When the store's disk fails"): modelfs serves a store on
 * {@link FaultFs}, which is stopped the way a hung NFS server or a spun-down disk stops (every operation waits)
 * while readers read converted files whose blob pages were never read and list a model folder not built yet. Neither
 * front end is wedged: the root lists, a file's {@code stat} and a file held in memory ({@code ollama/manifest.json})
 * answer within {@value #BOUND_SECONDS} s; once the disk answers again every stalled reader finishes with the right
 * bytes (the F16 values the test wrote, widened to F32 by the JDK).
 */
class StalledStoreTest {
    private static final int BOUND_SECONDS = 10;
    /** Runs each asynchronous client on a thread of its own (the common pool has one thread on 2 CPUs: one stalled call would hold back the next). */
    private static final java.util.concurrent.Executor OWN_THREAD = r -> Thread.ofPlatform().daemon().start(r);

    @TempDir
    Path tmp;

    /** The store: models a, b, c; the F16 values written are the oracle. */
    private final F16Store written = new F16Store();

    @Test
    void aStalledStoreDiskWedgesNeitherTheMountNorItsOtherFiles() throws Exception {
        Path store = written.write(tmp.resolve("store"), List.of("a", "b", "c"), 256);
        try (FaultFs lower = FaultFs.mount(store, tmp);
             CliMount m = CliMount.start(lower.mountpoint, tmp.resolve("mnt"), "--threads", "2", "--no-warmup")) {
            Path mnt = m.mountpoint;
            assertEquals(List.of("a", "b", "c"), list(mnt));
            assertTrue(Files.exists(mnt.resolve("a/fp32/model.safetensors")), "model a is built before the stall");
            byte[] manifestB = Files.readAllBytes(store.resolve("manifests/registry.ollama.ai/library/b/latest"));
            assertArrayEquals(manifestB, Files.readAllBytes(mnt.resolve("b/ollama/manifest.json")));
            List<Process> readers = new ArrayList<>();
            List<String> failures = new ArrayList<>();
            lower.set("stall");                                   // every operation of the store's disk waits
            try {
                for (int i = 0; i < 4; i++) {
                    readers.add(new ProcessBuilder("cp", mnt.resolve("a/fp32/model.safetensors").toString(),
                            tmp.resolve("out" + i).toString()).redirectErrorStream(true).start());
                }
                for (int i = 0; i < 3; i++) {                     // a model folder not built yet: built over the stalled disk
                    readers.add(new ProcessBuilder("ls", mnt.resolve("c").toString())
                            .redirectOutput(tmp.resolve("ls-c" + i).toFile()).start());
                }
                lower.awaitStalled(2, 30);
                bounded(failures, "ls of the mount's root", "ls", mnt.toString());
                bounded(failures, "stat of a converted file", "stat", mnt.resolve("a/fp32/model.safetensors").toString());
                bounded(failures, "cat of ollama/manifest.json of another model", "cat", mnt.resolve("b/ollama/manifest.json").toString());
                bounded(failures, "ls of a built model folder", "ls", mnt.resolve("a").toString());
                bounded(failures, "listxattr of a converted file", "python3", "-c", "import os, sys; os.listxattr(sys.argv[1])",
                        mnt.resolve("a/fp32/model.safetensors").toString());
                bounded(failures, "getxattr of a converted file", "python3", "-c",
                        "import os, sys; os.getxattr(sys.argv[1], 'user.modelfs.source')", mnt.resolve("a/fp32/model.safetensors").toString());
                bounded(failures, "statfs of the mount", "stat", "-f", mnt.toString());
                safepoint(failures, m.process);
            } finally {
                lower.set();                                      // the disk answers again
            }
            for (Process p : readers) {
                assertTrue(p.waitFor(60, TimeUnit.SECONDS), "a stalled reader finishes once the disk answers");
                assertEquals(0, p.exitValue(), new String(p.getInputStream().readAllBytes()) + "\n" + m.log());
            }
            assertTrue(failures.isEmpty(), "while the store's disk stalled:\n" + String.join("\n", failures) + "\n" + m.log());
            for (int i = 0; i < 4; i++) {
                F16Store.checkFp32(tmp.resolve("out" + i), written.get("a"));
            }
            for (int i = 0; i < 3; i++) {
                assertTrue(Files.readString(tmp.resolve("ls-c" + i)).contains("fp32"), "c's folder listed once built");
            }
        }
    }

    @Test
    void anNfsClientReadingAStalledBlobDoesNotStopAnotherClientsLs() throws Exception {
        CliNfs.requireClients();
        Path store = written.write(tmp.resolve("store"), List.of("a", "b", "c"), 256);
        try (FaultFs lower = FaultFs.mount(store, tmp);
             CliNfs nfs = CliNfs.start(lower.mountpoint, tmp.resolve("nfs.log"), CliNfs.freePort(), "--no-warmup")) {
            byte[] manifestB = Files.readAllBytes(store.resolve("manifests/registry.ollama.ai/library/b/latest"));
            byte[] converted;
            try (NfsRpcClient c = new NfsRpcClient(nfs.port)) {
                byte[] root = c.mount("/").fh();
                converted = c.walk(root, "a/fp32/model.safetensors");
                c.walk(root, "b/ollama/manifest.json");           // b's folder is built before the stall
            }
            List<Thread> readers = new ArrayList<>();
            List<String> failures = new ArrayList<>();
            List<byte[]> got = java.util.Collections.synchronizedList(new ArrayList<>());
            java.util.concurrent.CompletableFuture<CliNfs.Out> lsC;
            lower.set("stall");
            try {
                for (int i = 0; i < 12; i++) {                    // more READs than the server had threads
                    Thread t = Thread.ofPlatform().daemon().start(() -> {
                        try (NfsRpcClient c = new NfsRpcClient(nfs.port)) {
                            got.add(c.readAll(converted, 1 << 20));
                        } catch (IOException e) {
                            got.add(null);                        // the client's 20 s bound: counted below
                        }
                    });
                    readers.add(t);
                }
                lsC = java.util.concurrent.CompletableFuture.supplyAsync(() -> {   // a folder not built yet: waits for its model alone
                    try {
                        return CliNfs.run(60, "nfs-ls", nfs.url("c"));
                    } catch (IOException | InterruptedException | AssertionError e) {
                        return new CliNfs.Out(-1, new byte[0], e.toString());
                    }
                }, OWN_THREAD);
                lower.awaitStalled(2, 30);
                boundedNfs(failures, "nfs-ls of the root", nfs, "nfs-ls", nfs.url(""));
                CliNfs.Out cat = boundedNfs(failures, "nfs-cat of b/ollama/manifest.json", nfs, "nfs-cat", nfs.url("b/ollama/manifest.json"));
                if (cat != null && !Arrays.equals(manifestB, cat.stdout())) {
                    failures.add("nfs-cat of b/ollama/manifest.json: other bytes than the manifest");
                }
                boundedRpc(failures, "GETATTR of a/fp32/model.safetensors", nfs, 1, converted);
                boundedRpc(failures, "FSSTAT of the root", nfs, 18, converted);
                safepoint(failures, nfs.process);
            } finally {
                lower.set();
            }
            for (Thread t : readers) {
                t.join(TimeUnit.SECONDS.toMillis(60));
            }
            CliNfs.Out listedC = lsC.get(90, TimeUnit.SECONDS);
            assertTrue(listedC.exit() == 0 && new String(listedC.stdout()).contains("fp32"), "c's folder listed over NFS once built: " + listedC.stderr());
            assertTrue(failures.isEmpty(), "while the store's disk stalled:\n" + String.join("\n", failures) + "\n" + nfs.log());
            for (byte[] b : got) {
                if (b != null) {                                  // a READ that outlived the client's bound is not checked
                    Path f = Files.write(tmp.resolve("nfs-out"), b);
                    F16Store.checkFp32(f, written.get("a"));
                }
            }
            try (NfsRpcClient c = new NfsRpcClient(nfs.port)) {    // and the model is served after the stall
                F16Store.checkFp32(Files.write(tmp.resolve("nfs-after"), c.readAll(converted, 1 << 20)), written.get("a"));
            }
        }
    }

    /**
     * A conversion that waits on a page of an already mapped blob (the disk stalls after the server mapped it) holds
     * that one thread, not the server: its JVM still reaches a safepoint and {@code nfs-ls} of the root answers within
     * the bound (the soak of stop 43 saw a server answer nothing while a conversion faulted on a stalled page from Java
     * code); once the disk answers, the waiting READ completes.
     */
    @Test
    void aConversionWaitingOnAStalledPageOfAMappedBlobHoldsNoSafepointOfTheServer() throws Exception {
        CliNfs.requireClients();
        int rows = 16384;
        Path store = written.write(tmp.resolve("store"), List.of("a"), rows);
        try (FaultFs lower = FaultFs.mount(store, tmp);
             CliNfs nfs = CliNfs.start(lower.mountpoint, tmp.resolve("nfs.log"), CliNfs.freePort(), "--no-warmup")) {
            byte[] converted;
            try (NfsRpcClient c = new NfsRpcClient(nfs.port)) {
                converted = c.walk(c.mount("/").fh(), "a/fp32/model.safetensors");
                assertEquals(0, c.read(converted, 0, 4096).status(), "the blob is mapped and its first pages read");
            }
            long nearTheEnd = (long) F16Store.TENSORS * rows * F16Store.COLS * 4 - (1 << 20);   // far past any read-ahead
            List<String> failures = new ArrayList<>();
            java.util.concurrent.CompletableFuture<Integer> late;
            lower.set("stall");
            try {
                late = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try (NfsRpcClient c = new NfsRpcClient(nfs.port)) {
                        return c.read(converted, nearTheEnd, 1 << 20).status();
                    } catch (IOException e) {
                        return -1;
                    }
                }, OWN_THREAD);
                lower.awaitStalled(1, 30);
                safepoint(failures, nfs.process);
                boundedNfs(failures, "nfs-ls of the root", nfs, "nfs-ls", nfs.url(""));
            } finally {
                lower.set();
            }
            assertTrue(failures.isEmpty(), "while a conversion waited on the stalled disk:\n" + String.join("\n", failures) + "\n" + nfs.log());
            assertEquals(0, late.get(90, TimeUnit.SECONDS), "the waiting READ completes once the disk answers");
        }
    }

    /**
     * The server's JVM still reaches a safepoint (what a garbage collection, a deoptimization and a thread dump wait
     * for) while its readers wait on the stalled disk: {@code jcmd Thread.print} answers within the bound. A reader
     * waiting in a page fault of a mapped blob from Java code would hold every safepoint, and with it every thread.
     */
    private static void safepoint(List<String> failures, Process server) throws IOException, InterruptedException {
        bounded(failures, "a safepoint of the server's JVM (jcmd Thread.print)",
                Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), Long.toString(server.pid()), "Thread.print");
    }

    /** Runs {@code cmd}; a failure is recorded unless it exits 0 within the bound (it is killed at the bound). */
    static void bounded(List<String> failures, String what, String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(BOUND_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            failures.add(what + ": no answer within " + BOUND_SECONDS + " s");
        } else if (p.exitValue() != 0) {
            failures.add(what + ": exit " + p.exitValue());
        }
    }

    /** Calls NFS procedure {@code proc} on handle {@code fh} from a fresh client; a failure unless NFS3_OK within the bound. */
    private static void boundedRpc(List<String> failures, String what, CliNfs nfs, int proc, byte[] fh) throws InterruptedException {
        var status = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try (NfsRpcClient c = new NfsRpcClient(nfs.port)) {
                return c.status(proc, x -> x.xdrEncodeDynamicOpaque(fh));
            } catch (IOException e) {
                return -1;
            }
        }, OWN_THREAD);
        try {
            int st = status.get(BOUND_SECONDS, TimeUnit.SECONDS);
            if (st != 0) {
                failures.add(what + ": status " + st);
            }
        } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
            failures.add(what + ": no answer within " + BOUND_SECONDS + " s");
        }
    }

    private static CliNfs.Out boundedNfs(List<String> failures, String what, CliNfs nfs, String... cmd)
            throws IOException, InterruptedException {
        try {
            CliNfs.Out o = CliNfs.run(BOUND_SECONDS, cmd);
            if (o.exit() != 0) {
                failures.add(what + ": exit " + o.exit() + " " + o.stderr());
            }
            return o;
        } catch (AssertionError timedOut) {
            failures.add(what + ": no answer within " + BOUND_SECONDS + " s");
            return null;
        }
    }

    private static List<String> list(Path dir) throws IOException {
        try (var s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
