package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.fuse.MountTable;
import dev.modelfs.testing.Poll;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The soak test (issue 21): a real mount and a real {@code modelfs nfs} over a writable copy of the
 * fixture store, for {@code -Dmodelfs.soak.seconds} (default 120: two NFS kills, five store stalls; a developer runs it
 * for an hour with
 * 3600), beside {@code stress-ng --cpu 2} (both CPUs busy all along, {@link CpuLoad}), while models are pulled
 * and removed, hostile models (a GGUF of 100,000 tiny tensors, within the
 * memory budget: its whole directory is built, about 115 MiB of heap; a GGUF whose header claims 2^40
 * tensors) appear and disappear, the NFS server is killed
 * with SIGKILL and restarted, and the store's disk stalls for {@link #STALL_FOR} every {@link #STALL_EVERY} (the store is
 * served through {@link FaultFs}; while it stalls, listing the root, a {@code stat} and reading an in-memory file answer
 * within {@link #STALLED_BOUND_SECONDS} s on the mount and over NFS, issue 35). Readers over FUSE and NFS read converted and passthrough files,
 * sequentially and at random offsets. Invariants, checked throughout: every byte read equals its oracle
 * (the blob on disk; gguf-py's dequantization of every tensor, from the fixture's {@code .npy} files) or
 * the read fails with an errno (only for files that are being removed or while the NFS server is down);
 * no request is left unanswered: each request (one read, one NFS RPC, one listing) is answered within
 * {@link #REQUEST_BOUND} ({@link RequestWatchdog}), and a restarted server serves within {@link #START_BOUND}
 * (its own readiness, its own bound: the deliberate pause between kills and a server's start are never
 * counted as a request's latency); both daemons' resident memory stays under {@link #RSS_BOUND_KIB},
 * measured after every round that loads them (a hostile model listed, a reader's round); at the end both exit
 * 0 and no mount is left behind.
 */
class SoakTest {
    private static final long SECONDS = Long.getLong("modelfs.soak.seconds", 120);
    private static final long RSS_BOUND_KIB = 700 * 1024;
    /** The longest one request may take: a read of at most 4 MiB or one RPC, on a loaded 2-CPU machine. */
    private static final Duration REQUEST_BOUND = Duration.ofSeconds(60);
    /**
     * The longest a restarted {@code modelfs nfs} may take to serve: 7-8 s over the test store on a quiet machine
     * (the warm-up), several times that beside the CPU load, the readers and the churn.
     */
    private static final Duration START_BOUND = Duration.ofSeconds(150);
    /** The longest a pulled model may take to show in the mount (a rescan; 250 ms on a quiet machine). */
    private static final Duration PULL_BOUND = Duration.ofSeconds(30);
    /** The pause between two NFS kills: the fault's rhythm, deliberate (the killer also waits for a reader's round first). */
    private static final Duration KILL_EVERY = Duration.ofSeconds(40);
    /** The pause between two stalls of the store's disk, and how long each lasts: the fault's rhythm, deliberate. */
    private static final Duration STALL_EVERY = Duration.ofSeconds(20), STALL_FOR = Duration.ofSeconds(5);
    /** The longest a request that needs no store I/O may take while the store's disk stalls (issue 35). */
    private static final long STALLED_BOUND_SECONDS = 10;
    private static final String MODEL = "hf-llama:q8_0";
    private static final String PASSTHROUGH = "model.gguf";
    /** The model's fp32 safetensors file (GGUF tensor names), as the fixture's expected.json names it. */
    private String convertedPath;

    @TempDir
    Path tmp;

    private final AtomicBoolean stop = new AtomicBoolean();
    /** Counted down when the soak ends or the first failure arrives: what the test and the killer's pause wait on. */
    private final CountDownLatch over = new CountDownLatch(1);
    private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    private final Map<String, AtomicLong> progress = new ConcurrentHashMap<>();
    private final AtomicLong tolerated = new AtomicLong();
    private final RequestWatchdog watchdog = new RequestWatchdog(this::fail);
    /** The current NFS server, completed once it serves; replaced by a new incomplete one when the killer strikes. */
    private volatile CompletableFuture<CliNfs> nfs;
    private final AtomicLong nfsRestarts = new AtomicLong();
    /** NFS reader rounds completed, so that the killer lets each server be read before it kills it. */
    private final AtomicLong nfsRounds = new AtomicLong();
    private long mountPid;
    /** The store's disk ({@link FaultFs} over the copied store), unmounted after the test whatever happens. */
    private FaultFs lower;

    @org.junit.jupiter.api.AfterEach
    void unmountTheStoresDisk() throws IOException {
        if (lower != null) {
            lower.close();
        }
    }

    private void fail(String failure) {
        failures.add(failure);
        over.countDown();
    }

    @Test
    void readersSeeTheOracleOrAnErrnoThroughChurnHostileModelsAndNfsKills() throws Exception {
        Path store = Fixture.copyStore(tmp.resolve("store"));
        JsonNode expected = new ObjectMapper().readTree(Fixture.dir().resolve("expected.json").toFile()).get("models").get(MODEL);
        byte[] blob = Files.readAllBytes(store.resolve("blobs").resolve(
                expected.get("files").get(PASSTHROUGH).get("blob").asText().replace(':', '-')));
        convertedPath = fp32Safetensors(expected.get("converted"));
        Map<String, byte[]> tensorOracles = tensorOracles(expected.get("converted").get(convertedPath).get("tensors"));
        int port = CliNfs.freePort();
        lower = FaultFs.mount(store, tmp);                        // the store's disk, which stalls now and then
        Path served = lower.mountpoint;
        CliMount mount = CliMount.start(START_BOUND, served, tmp.resolve("mnt"), "--cache-size", "64M");
        mountPid = mount.process.pid();
        nfs = CompletableFuture.completedFuture(CliNfs.start(START_BOUND, served, tmp.resolve("nfs.log"), port));
        Path mp = mount.mountpoint;
        byte[] converted = Files.readAllBytes(mp.resolve(MODEL).resolve(convertedPath));
        checkTensors(converted, tensorOracles, "first read");
        assertTrue(failures.isEmpty(), String.join("\n", failures));

        List<Thread> threads = new ArrayList<>();
        CpuLoad load = CpuLoad.start(2, Duration.ofSeconds(SECONDS + 60), tmp.resolve("stress-ng.log"));
        boolean loadedThroughout;
        try {
            threads.add(worker("fuse-sequential-converted", r -> {
                checkTensors(watchdog.time("fuse-read", "FUSE read of all of " + convertedPath, REQUEST_BOUND,
                        () -> Files.readAllBytes(mp.resolve(MODEL).resolve(convertedPath))), tensorOracles, "sequential read");
                checkMemory(mountPid);
            }));
            threads.add(worker("fuse-random-passthrough", r -> randomRead(mp.resolve(MODEL).resolve(PASSTHROUGH), blob, r)));
            threads.add(worker("fuse-random-converted", r -> randomRead(mp.resolve(MODEL).resolve(convertedPath), converted, r)));
            threads.add(worker("nfs-sequential-and-random", r -> nfsRead(port, blob, converted, tensorOracles, r)));
            threads.add(worker("churn", r -> churn(store, mp, r)));
            threads.add(worker("nfs-killer", r -> killAndRestartNfs(served, port)));
            threads.add(worker("store-staller", r -> stallTheStore(lower, mp, port)));
            over.await(SECONDS, TimeUnit.SECONDS);                // the soak's length, or its first failure
            loadedThroughout = load.running();
            stop.set(true);
            over.countDown();                                     // ends the killer's pause
            for (Thread t : threads) {
                t.join(START_BOUND.plus(REQUEST_BOUND).toMillis());   // a worker's last request, or the killer's last start
                if (t.isAlive()) {
                    failures.add(t.getName() + " did not finish: a request left unanswered");
                }
            }
        } finally {
            load.close();
            watchdog.close();
        }
        CliNfs last = nfs.isDone() && !nfs.isCompletedExceptionally() ? nfs.join() : null;   // null: its start failed (reported)
        if (last != null) {
            last.close();                                        // SIGTERM: exit 0 required
        }
        mount.close();                                           // SIGTERM: exit 0 and unmounted required
        lower.close();
        assertTrue(failures.isEmpty(), String.join("\n", failures) + "\nmount log:\n" + tail(mount.log())
                + (last == null ? "" : "\nNFS server log:\n" + tail(Files.readString(last.log))));
        assertTrue(loadedThroughout, "stress-ng kept both CPUs busy for the whole soak");
        assertFalse(MountTable.isMounted(mp), "no mount left behind");
        assertFalse(mount.process.isAlive() || (last != null && last.process.isAlive()), "no process left behind");
        for (var e : progress.entrySet()) {
            assertTrue(e.getValue().get() > 0, e.getKey() + " never completed a round");
        }
        if (SECONDS > KILL_EVERY.toSeconds() * 2) {
            assertTrue(nfsRestarts.get() > 0, "the NFS server was never killed");
        }
        System.out.println("soak: " + SECONDS + " s beside stress-ng --cpu 2, rounds " + progress + ", NFS restarts " + nfsRestarts.get()
                + ", tolerated errnos " + tolerated.get() + ", requests " + watchdog.summary());
    }

    // ---- the workers ----

    @FunctionalInterface
    private interface Round {
        void run(Random random) throws Exception;
    }

    private Thread worker(String name, Round round) {
        AtomicLong done = new AtomicLong();
        progress.put(name, done);
        Thread t = new Thread(() -> {
            Random random = new Random(name.hashCode());
            while (!stop.get()) {
                try {
                    round.run(random);
                    done.incrementAndGet();
                } catch (Throwable e) {
                    fail(name + ": " + e);
                    return;
                }
            }
        }, "soak-" + name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private void randomRead(Path file, byte[] oracle, Random r) throws Exception {
        try (FileChannel ch = watchdog.time("fuse-open", "FUSE open of " + file, REQUEST_BOUND, () -> FileChannel.open(file))) {
            for (int i = 0; i < 64; i++) {
                int len = 1 + r.nextInt(256 * 1024);
                long off = r.nextLong(oracle.length);
                ByteBuffer b = ByteBuffer.allocate(len);
                int n = watchdog.time("fuse-read", "FUSE read of " + file + " at " + off, REQUEST_BOUND, () -> ch.read(b, off));
                int want = (int) Math.min(len, oracle.length - off);
                if (n != want || !Arrays.equals(b.array(), 0, n, oracle, (int) off, (int) off + n)) {
                    fail(file + " at " + off + ": " + n + " bytes, not the oracle's " + want);
                }
            }
        }
    }

    private void nfsRead(int port, byte[] blob, byte[] converted, Map<String, byte[]> tensorOracles, Random r) throws Exception {
        long restartsBefore = nfsRestarts.get();
        CliNfs server;
        try {
            server = nfs.get(START_BOUND.toSeconds() + 30, TimeUnit.SECONDS);   // a restarted server: its readiness, its bound
        } catch (TimeoutException e) {
            throw new AssertionError("no NFS server serves " + (START_BOUND.toSeconds() + 30) + " s after the last kill");
        }
        try (NfsRpcClient c = watchdog.time("nfs-connect", "NFS connect", REQUEST_BOUND, () -> new NfsRpcClient(port))) {
            byte[] root = watchdog.time("nfs-mount", "NFS MOUNT", REQUEST_BOUND, () -> c.mount("/").fh());
            byte[] pass = watchdog.time("nfs-lookup", "NFS LOOKUPs of " + PASSTHROUGH, REQUEST_BOUND, () -> c.walk(root, MODEL + "/" + PASSTHROUGH));
            byte[] conv = watchdog.time("nfs-lookup", "NFS LOOKUPs of " + convertedPath, REQUEST_BOUND, () -> c.walk(root, MODEL + "/" + convertedPath));
            checkTensors(watchdog.time("nfs-read-all", "NFS READs of all of " + convertedPath, REQUEST_BOUND, () -> c.readAll(conv, 1 << 20)),
                    tensorOracles, "NFS sequential read");
            for (int i = 0; i < 64; i++) {
                boolean p = r.nextBoolean();
                byte[] oracle = p ? blob : converted;
                long off = r.nextLong(oracle.length);
                int count = 1 + r.nextInt(1 << 20);
                NfsRpcClient.Read got = watchdog.time("nfs-read", "NFS READ of " + (p ? PASSTHROUGH : convertedPath) + " at " + off,
                        REQUEST_BOUND, () -> c.read(p ? pass : conv, off, count));
                if (got.status() != 0 || !Arrays.equals(got.data(), 0, got.data().length, oracle, (int) off, (int) off + got.data().length)) {
                    fail("NFS READ of " + (p ? PASSTHROUGH : convertedPath) + " at " + off + ": status " + got.status());
                }
            }
            nfsRounds.incrementAndGet();
        } catch (IOException e) {
            if (nfsRestarts.get() == restartsBefore && server.process.isAlive()) {
                fail("NFS read failed while the server was up: " + e);
            }
            tolerated.incrementAndGet();                         // the server was killed: the next round waits for the new one
        }
        checkMemory(server.process.pid());
    }

    private int generation;

    /** One pull and one removal, a hostile model appearing or disappearing, and reads of the pulled model. */
    private void churn(Path store, Path mp, Random r) throws Exception {
        String name = "churn-" + (++generation);
        byte[] bytes = new byte[64 * 1024 + r.nextInt(64 * 1024)];
        r.nextBytes(bytes);
        SmallStore.addModel(store, name, bytes);
        boolean hostile = generation % 2 == 0;
        Path hostileManifest = store.resolve("manifests/registry.ollama.ai/library/hostile/latest");
        if (hostile) {
            SmallStore.addModel(store, "hostile", generation % 4 == 0 ? MemoryBudgetTest.ggufWithTinyTensors(100_000) : claims2pow40());
        }
        Path pulled = mp.resolve(name).resolve(PASSTHROUGH);
        Poll.until(name + " readable after its pull", PULL_BOUND, () -> {
            try {
                byte[] got = watchdog.time("fuse-read", "FUSE read of " + pulled, REQUEST_BOUND, () -> Files.readAllBytes(pulled));
                if (!Arrays.equals(bytes, got)) {
                    fail(name + ": bytes differ from its blob");
                }
                return true;
            } catch (IOException notYetVisible) {
                tolerated.incrementAndGet();
                return false;
            }
        });
        if (hostile) {
            try {
                watchdog.time("fuse-list", "FUSE listing of the hostile model", REQUEST_BOUND, () -> {
                    try (Stream<Path> s = Files.list(mp.resolve("hostile"))) {
                        return s.count();                        // listed quickly, refused inside
                    }
                });
            } catch (IOException | RuntimeException goneAlready) {
                tolerated.incrementAndGet();
            }
            checkMemory(mountPid);                               // its directory built: the mount's peak
        }
        Files.delete(store.resolve("manifests/registry.ollama.ai/library").resolve(name).resolve("latest"));
        if (hostile) {
            Files.deleteIfExists(hostileManifest);
        }
    }

    /** A GGUF header claiming 2^40 tensors in a 64-byte file. */
    private static byte[] claims2pow40() {
        return ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN).putInt(0x46554747).putInt(3).putLong(1L << 40).putLong(0).array();
    }

    /**
     * One fault: after {@link #KILL_EVERY} (a deliberate pause, the fault's rhythm; cut short when the soak ends) and
     * once the NFS reader has finished a round against the current server, SIGKILL it and start a new one on the
     * same port, awaited by its own readiness within {@link #START_BOUND}.
     */
    /**
     * One stall of the store's disk: after {@link #STALL_EVERY}, every operation of the store's disk waits for
     * {@link #STALL_FOR}; meanwhile the root lists, a file's {@code stat} and {@code ollama/manifest.json} answer on the
     * mount within {@link #STALLED_BOUND_SECONDS} s, and so does {@code nfs-ls} of the root when a server is up.
     */
    private void stallTheStore(FaultFs lower, Path mp, int port) throws Exception {
        if (over.await(STALL_EVERY.toSeconds(), TimeUnit.SECONDS)) {
            return;
        }
        long deadline = System.nanoTime() + STALL_FOR.toNanos();
        lower.set("stall");
        try {
            List<String> stalled = new ArrayList<>();
            StalledStoreTest.bounded(stalled, "ls of the mount's root", "ls", mp.toString());
            StalledStoreTest.bounded(stalled, "stat of " + PASSTHROUGH, "stat", mp.resolve(MODEL).resolve(PASSTHROUGH).toString());
            StalledStoreTest.bounded(stalled, "cat of ollama/manifest.json", "cat", mp.resolve(MODEL).resolve("ollama/manifest.json").toString());
            CompletableFuture<CliNfs> server = nfs;
            if (server.isDone() && !server.isCompletedExceptionally() && server.join().process.isAlive()) {
                long restartsBefore = nfsRestarts.get();
                CliNfs.Out ls;
                try {
                    ls = CliNfs.run(STALLED_BOUND_SECONDS, "nfs-ls", CliNfs.url("", port));
                } catch (AssertionError timedOut) {
                    ls = null;
                }
                if ((ls == null || ls.exit() != 0) && nfsRestarts.get() == restartsBefore) {    // not killed meanwhile
                    stalled.add("nfs-ls of the root: " + (ls == null ? "no answer within " + STALLED_BOUND_SECONDS + " s" : "exit " + ls.exit())
                            + "; the server's modelfs threads:\n" + Env.modelfsThreads(server.join().process.pid()));
                }
            }
            if (!stalled.isEmpty()) {
                stalled.add("the mount's modelfs threads:\n" + Env.modelfsThreads(mountPid));
            }
            for (String f : stalled) {
                fail("while the store's disk stalled: " + f);
            }
            long left = deadline - System.nanoTime();
            if (left > 0) {
                over.await(left, TimeUnit.NANOSECONDS);           // the rest of the stall: the fault's length, deliberate
            }
        } finally {
            lower.set();
        }
    }

    private void killAndRestartNfs(Path store, int port) throws Exception {
        long roundsBefore = nfsRounds.get();
        if (over.await(KILL_EVERY.toSeconds(), TimeUnit.SECONDS)) {
            return;
        }
        Poll.within(START_BOUND.plus(REQUEST_BOUND), () -> stop.get() || nfsRounds.get() > roundsBefore);   // each server is read
        if (stop.get()) {
            return;
        }
        CliNfs old = nfs.getNow(null);
        CompletableFuture<CliNfs> next = new CompletableFuture<>();
        nfs = next;                                              // readers from now on wait for the new server
        nfsRestarts.incrementAndGet();
        old.process.destroyForcibly();                           // SIGKILL
        assertTrue(old.process.waitFor(30, TimeUnit.SECONDS), "the killed NFS server exits");
        try {
            next.complete(CliNfs.start(START_BOUND, store, tmp.resolve("nfs-" + nfsRestarts.get() + ".log"), port));
        } catch (Throwable e) {
            next.completeExceptionally(e);
            throw e;
        }
    }

    private void checkMemory(long pid) throws IOException {
        long rss = Env.rssKib(pid);                              // 0 for a process just killed
        if (rss > RSS_BOUND_KIB) {
            fail("process " + pid + " uses " + rss + " KiB resident, over " + RSS_BOUND_KIB);
        }
    }

    // ---- oracles ----

    /** The path of the fp32 safetensors file among the model's converted files in expected.json. */
    private static String fp32Safetensors(JsonNode converted) {
        for (var it = converted.fields(); it.hasNext(); ) {
            var e = it.next();
            if ("safetensors".equals(e.getValue().path("kind").asText()) && "fp32".equals(e.getValue().path("variant").asText())) {
                return e.getKey();
            }
        }
        throw new AssertionError("no fp32 safetensors file in " + converted.toString().substring(0, 200));
    }

    /** Each tensor's expected bytes: the raw little-endian data of its {@code .npy} oracle (gguf-py, numpy). */
    private static Map<String, byte[]> tensorOracles(JsonNode tensors) throws Exception {
        Map<String, byte[]> out = new HashMap<>();
        for (var it = tensors.fields(); it.hasNext(); ) {
            var e = it.next();
            byte[] npy = Files.readAllBytes(Fixture.dir().resolve(e.getValue().get("oracle").asText()));
            int headerLen = (npy[8] & 0xff) | (npy[9] & 0xff) << 8;                    // .npy version 1
            String header = new String(npy, 10, headerLen, StandardCharsets.ISO_8859_1);
            assertTrue(npy[6] == 1 && header.contains("'descr': '<f4'") && header.contains("'fortran_order': False"), header);
            out.put(e.getKey(), Arrays.copyOfRange(npy, 10 + headerLen, npy.length));
        }
        return out;
    }

    /** Every tensor of a safetensors file equals its oracle (the header only says where each one lies). */
    private void checkTensors(byte[] file, Map<String, byte[]> oracles, String what) throws IOException {
        long headerLen = ByteBuffer.wrap(file, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        JsonNode header = new ObjectMapper().readTree(new String(file, 8, (int) headerLen, StandardCharsets.UTF_8));
        int base = 8 + (int) headerLen;
        int seen = 0;
        for (var e : oracles.entrySet()) {
            JsonNode t = header.get(e.getKey());
            if (t == null) {
                fail(what + ": no tensor " + e.getKey());
                continue;
            }
            int from = base + t.get("data_offsets").get(0).asInt();
            int to = base + t.get("data_offsets").get(1).asInt();
            if (!Arrays.equals(file, from, to, e.getValue(), 0, e.getValue().length)) {
                fail(what + ": tensor " + e.getKey() + " differs from its oracle");
            }
            seen++;
        }
        assertEquals(oracles.size(), seen);
    }

    private static String tail(String log) {
        return log.length() > 4000 ? log.substring(log.length() - 4000) : log;
    }
}
