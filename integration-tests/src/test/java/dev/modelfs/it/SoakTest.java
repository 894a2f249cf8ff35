package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.fuse.MountTable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The soak test (issue 21): a real mount and a real {@code modelfs nfs} over a writable copy of the
 * fixture store, for {@code -Dmodelfs.soak.seconds} (default 180; a developer runs it for an hour with
 * 3600), while models are pulled and removed, hostile models (a GGUF of 100,000 tiny tensors, within the
 * memory budget: its whole directory is built, about 115 MiB of heap; a GGUF whose header claims 2^40
 * tensors) appear and disappear, and the NFS server is killed
 * with SIGKILL and restarted. Readers over FUSE and NFS read converted and passthrough files,
 * sequentially and at random offsets. Invariants, checked throughout: every byte read equals its oracle
 * (the blob on disk; gguf-py's dequantization of every tensor, from the fixture's {@code .npy} files) or
 * the read fails with an errno (only for files that are being removed or while the NFS server is down);
 * no request is left unanswered (each reader makes progress at least every 60 s); both daemons' resident
 * memory stays under {@link #RSS_BOUND_KIB}; at the end both exit 0 and no mount is left behind.
 */
class SoakTest {
    private static final long SECONDS = Long.getLong("modelfs.soak.seconds", 180);
    private static final long RSS_BOUND_KIB = 700 * 1024;
    private static final String MODEL = "hf-llama:q8_0";
    private static final String PASSTHROUGH = "model.gguf";
    /** The model's fp32 safetensors file (GGUF tensor names), as the fixture's expected.json names it. */
    private String convertedPath;

    @TempDir
    Path tmp;

    private final AtomicBoolean stop = new AtomicBoolean();
    private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    private final Map<String, AtomicLong> progress = new ConcurrentHashMap<>();
    private final AtomicLong tolerated = new AtomicLong();
    private volatile CliNfs nfs;
    private final AtomicLong nfsRestarts = new AtomicLong();

    @Test
    void readersSeeTheOracleOrAnErrnoThroughChurnHostileModelsAndNfsKills() throws Exception {
        Path store = Fixture.copyStore(tmp.resolve("store"));
        JsonNode expected = new ObjectMapper().readTree(Fixture.dir().resolve("expected.json").toFile()).get("models").get(MODEL);
        byte[] blob = Files.readAllBytes(store.resolve("blobs").resolve(
                expected.get("files").get(PASSTHROUGH).get("blob").asText().replace(':', '-')));
        convertedPath = fp32Safetensors(expected.get("converted"));
        Map<String, byte[]> tensorOracles = tensorOracles(expected.get("converted").get(convertedPath).get("tensors"));
        int port = CliNfs.freePort();
        CliMount mount = CliMount.start(store, tmp.resolve("mnt"), "--cache-size", "64M");
        nfs = CliNfs.start(store, tmp.resolve("nfs.log"), port);
        Path mp = mount.mountpoint;
        byte[] converted = Files.readAllBytes(mp.resolve(MODEL).resolve(convertedPath));
        checkTensors(converted, tensorOracles, "first read");
        assertTrue(failures.isEmpty(), String.join("\n", failures));

        List<Thread> threads = new ArrayList<>();
        threads.add(worker("fuse-sequential-converted", r -> checkTensors(
                Files.readAllBytes(mp.resolve(MODEL).resolve(convertedPath)), tensorOracles, "sequential read")));
        threads.add(worker("fuse-random-passthrough", r -> randomRead(mp.resolve(MODEL).resolve(PASSTHROUGH), blob, r)));
        threads.add(worker("fuse-random-converted", r -> randomRead(mp.resolve(MODEL).resolve(convertedPath), converted, r)));
        threads.add(worker("nfs-sequential-and-random", r -> nfsRead(port, blob, converted, tensorOracles, r)));
        threads.add(worker("churn", r -> churn(store, mp, r)));
        threads.add(worker("nfs-killer", r -> killAndRestartNfs(store, port)));
        threads.add(worker("memory", r -> checkMemory(mount.process.pid())));
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(SECONDS);
        Map<String, Long> last = new HashMap<>();
        Map<String, Long> lastChange = new HashMap<>();
        while (System.nanoTime() < end && failures.isEmpty()) {
            Thread.sleep(1000);
            for (var e : progress.entrySet()) {                  // the watchdog: no request left unanswered
                long now = System.nanoTime();
                if (!Long.valueOf(e.getValue().get()).equals(last.put(e.getKey(), e.getValue().get()))) {
                    lastChange.put(e.getKey(), now);
                } else if (now - lastChange.getOrDefault(e.getKey(), now) > TimeUnit.SECONDS.toNanos(60)) {
                    failures.add(e.getKey() + ": no progress for 60 s (a request left unanswered?)");
                }
            }
        }
        stop.set(true);
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(90));
            if (t.isAlive()) {
                failures.add(t.getName() + " did not finish: a request left unanswered");
            }
        }
        nfs.close();                                             // SIGTERM: exit 0 required
        mount.close();                                           // SIGTERM: exit 0 and unmounted required
        assertTrue(failures.isEmpty(), String.join("\n", failures) + "\nmount log:\n" + tail(mount.log()));
        assertFalse(MountTable.isMounted(mp), "no mount left behind");
        assertFalse(mount.process.isAlive() || nfs.process.isAlive(), "no process left behind");
        for (var e : progress.entrySet()) {
            assertTrue(e.getValue().get() > 0, e.getKey() + " never completed a round");
        }
        System.out.println("soak: " + SECONDS + " s, rounds " + progress + ", tolerated errnos " + tolerated.get());
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
                    failures.add(name + ": " + e);
                    return;
                }
            }
        }, "soak-" + name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private void randomRead(Path file, byte[] oracle, Random r) throws IOException {
        try (FileChannel ch = FileChannel.open(file)) {
            for (int i = 0; i < 64; i++) {
                int len = 1 + r.nextInt(256 * 1024);
                long off = r.nextLong(oracle.length);
                ByteBuffer b = ByteBuffer.allocate(len);
                int n = ch.read(b, off);
                int want = (int) Math.min(len, oracle.length - off);
                if (n != want || !Arrays.equals(b.array(), 0, n, oracle, (int) off, (int) off + n)) {
                    failures.add(file + " at " + off + ": " + n + " bytes, not the oracle's " + want);
                }
            }
        }
    }

    private void nfsRead(int port, byte[] blob, byte[] converted, Map<String, byte[]> tensorOracles, Random r) throws Exception {
        long restartsBefore = nfsRestarts.get();
        CliNfs server = nfs;
        try (NfsRpcClient c = new NfsRpcClient(port)) {
            byte[] root = c.mount("/").fh();
            byte[] pass = c.walk(root, MODEL + "/" + PASSTHROUGH);
            byte[] conv = c.walk(root, MODEL + "/" + convertedPath);
            checkTensors(c.readAll(conv, 1 << 20), tensorOracles, "NFS sequential read");
            for (int i = 0; i < 64; i++) {
                boolean p = r.nextBoolean();
                byte[] oracle = p ? blob : converted;
                long off = r.nextLong(oracle.length);
                NfsRpcClient.Read got = c.read(p ? pass : conv, off, 1 + r.nextInt(1 << 20));
                if (got.status() != 0 || !Arrays.equals(got.data(), 0, got.data().length, oracle, (int) off, (int) off + got.data().length)) {
                    failures.add("NFS READ of " + (p ? PASSTHROUGH : convertedPath) + " at " + off + ": status " + got.status());
                }
            }
        } catch (IOException e) {
            if (nfsRestarts.get() == restartsBefore && server.process.isAlive()) {
                failures.add("NFS read failed while the server was up: " + e);
            }
            tolerated.incrementAndGet();                         // the server was killed: reconnect next round
            Thread.sleep(200);
        }
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
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);    // a pull shows within a second
        while (true) {
            try {
                if (!Arrays.equals(bytes, Files.readAllBytes(mp.resolve(name).resolve(PASSTHROUGH)))) {
                    failures.add(name + ": bytes differ from its blob");
                }
                break;
            } catch (IOException notYetVisible) {
                if (System.nanoTime() > deadline) {
                    failures.add(name + ": still not readable 5 s after the pull: " + notYetVisible);
                    break;
                }
                tolerated.incrementAndGet();
                Thread.sleep(100);
            }
        }
        if (hostile) {
            try (Stream<Path> s = Files.list(mp.resolve("hostile"))) {
                s.count();                                       // listed quickly, refused inside
            } catch (IOException | RuntimeException goneAlready) {
                tolerated.incrementAndGet();
            }
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

    private void killAndRestartNfs(Path store, int port) throws Exception {
        for (int i = 0; i < 400 && !stop.get(); i++) {
            Thread.sleep(100);                                   // every 40 s
        }
        if (stop.get()) {
            return;
        }
        nfsRestarts.incrementAndGet();
        nfs.process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);  // SIGKILL
        nfs = CliNfs.start(store, tmp.resolve("nfs.log"), port);
    }

    private void checkMemory(long mountPid) throws Exception {
        for (long pid : new long[] {mountPid, nfs.process.pid()}) {
            long rss = Env.rssKib(pid);                          // 0 for a process just killed
            if (rss > RSS_BOUND_KIB) {
                failures.add("process " + pid + " uses " + rss + " KiB resident, over " + RSS_BOUND_KIB);
            }
        }
        Thread.sleep(2000);
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
                failures.add(what + ": no tensor " + e.getKey());
                continue;
            }
            int from = base + t.get("data_offsets").get(0).asInt();
            int to = base + t.get("data_offsets").get(1).asInt();
            if (!Arrays.equals(file, from, to, e.getValue(), 0, e.getValue().length)) {
                failures.add(what + ": tensor " + e.getKey() + " differs from its oracle");
            }
            seen++;
        }
        assertEquals(oracles.size(), seen);
    }

    private static String tail(String log) {
        return log.length() > 4000 ? log.substring(log.length() - 4000) : log;
    }
}
