package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.testing.Poll;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Linux kernel's NFS client reading {@code modelfs nfs}: a {@link QemuGuest} mounts a real server
 * on the host (NFSv3 over TCP, through QEMU's user network) and its busybox reads the export, while the
 * host reads a FUSE mount of the same store with coreutils; {@code qemu/report.sh} prints the same
 * report on both sides (checksums, {@code stat} fields, names) and the reports must be equal.
 *
 * <p>The guest boots once; the tests run in order because the last two change the servers and the
 * store (a SIGKILL and restart, then a model removed).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@SecondLane
class KernelNfsClientTest {
    /** How many models the crowded store holds, all in one namespace folder. */
    static final int CROWD = 5000;
    static final String WHOLE_BLOB = NfsServerTest.WHOLE_BLOB;
    static final String CONVERTED = NfsServerTest.CONVERTED;
    static final String REMOVED = "tiny-st";
    /**
     * The read-only mount keeps a folder's attributes, and so its cached listing, for 1 s instead of
     * the kernel's default 30 to 60 s (as a user would shorten them with {@code acdirmax}), so the test
     * sees a removal within a bounded wait without dropping the guest's caches.
     */
    static final String DIRECTORY_ATTRIBUTE_CACHE = "acdirmin=1,acdirmax=1";
    /** How long the removed model may stay in the guest's listing once the servers no longer serve it. */
    static final long LISTING_UPDATE_SECONDS = 10;
    static final Path REPORT = Path.of("qemu", "report.sh").toAbsolutePath();

    @TempDir
    static Path work;
    static Path store;
    static CliMount mount;
    static CliNfs nfs;
    static CliNfs crowdNfs;
    static QemuGuest guest;

    @BeforeAll
    static void serveAndBoot() throws Exception {
        store = Fixture.copyStore(work.resolve("store"));
        mount = CliMount.start(store, work.resolve("mnt"));
        nfs = CliNfs.start(store, work.resolve("nfs.log"), CliNfs.freePort(), "--refresh-ms", "100");
        crowdNfs = CliNfs.start(crowdStore(work.resolve("crowd")), work.resolve("crowd-nfs.log"), CliNfs.freePort());
        guest = QemuGuest.boot(work.resolve("console.log"));
        requireOk(guest.run(60, mountCommand(nfs.port, "ro," + DIRECTORY_ATTRIBUTE_CACHE, "/mnt")));
        requireOk(guest.run(60, "mkdir -p /rw && " + mountCommand(nfs.port, "rw", "/rw")));
        requireOk(guest.run(60, mountCommand(crowdNfs.port, "ro", "/many")));
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (guest != null) {
                guest.close();
            }
        } finally {
            for (AutoCloseable c : new AutoCloseable[] {crowdNfs, nfs, mount}) {
                if (c != null) {
                    c.close();
                }
            }
        }
    }

    /** The README's client command line, with the host's loopback as QEMU's gateway. */
    static String mountCommand(int port, String options, String dir) {
        return "mount -t nfs -o " + options + ",vers=3,proto=tcp,port=" + port + ",mountport=" + port
                + ",mountproto=tcp,nolock,addr=10.0.2.2 10.0.2.2:/ " + dir;
    }

    /**
     * A store of {@link #CROWD} models in the namespace {@code crowd} (so the tree has one folder of
     * that many entries), each a config and a license layer; the blobs are shared.
     */
    static Path crowdStore(Path dir) throws IOException {
        String config = blob(dir, "{\"model_format\":\"gguf\",\"model_family\":\"llama\"}");
        String license = blob(dir, "MIT License\n");
        for (int i = 0; i < CROWD; i++) {
            Path manifest = dir.resolve("manifests/registry.ollama.ai/crowd/" + crowdName(i) + "/latest");
            Files.createDirectories(manifest.getParent());
            Files.writeString(manifest, "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
                    + "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\"," + config + "},"
                    + "\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.license\"," + license + "}]}");
        }
        return dir;
    }

    static String crowdName(int i) {
        return String.format("model-%04d", i);
    }

    /** Writes a blob; returns its manifest fields {@code "digest":...,"size":...}. */
    static String blob(Path store, String content) throws IOException {
        byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
        String hex = HexFormat.of().formatHex(sha256(bytes, 0));
        Files.createDirectories(store.resolve("blobs"));
        Files.write(store.resolve("blobs/sha256-" + hex), bytes);
        return "\"digest\":\"sha256:" + hex + "\",\"size\":" + bytes.length;
    }

    static byte[] sha256(byte[] bytes, int from) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update(bytes, from, bytes.length - from);
            return md.digest();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    static String sha256Hex(Path file, int from) throws IOException {
        return HexFormat.of().formatHex(sha256(Files.readAllBytes(file), from));
    }

    static QemuGuest.Result requireOk(QemuGuest.Result r) throws IOException {
        assertEquals(0, r.exit(), "guest command failed:\n" + r.output() + "\nserver log:\n" + nfs.log());
        return r;
    }

    /** {@code report.sh KIND} over the kernel's NFS mount in the guest. */
    static List<String> guestReport(String kind, String dir) throws Exception {
        return requireOk(guest.run(600, "report.sh " + kind + " " + dir)).lines();
    }

    /** {@code report.sh KIND} over the FUSE mount on the host (dash and coreutils). */
    static List<String> hostReport(String kind, Path dir) throws Exception {
        Env.Run r = Env.run(600, List.of("sh", REPORT.toString(), kind, dir.toString()));
        assertEquals(0, r.exit(), r.output());
        return r.output().lines().toList();
    }

    private static final Pattern REPORT_LINE = Pattern.compile("^(.*?) (\\.(?:/.*)?)$");

    /** A report keyed by path (the last field; paths start with {@code .}). */
    static Map<String, String> byPath(List<String> report) {
        Map<String, String> m = new TreeMap<>();
        for (String line : report) {
            Matcher x = REPORT_LINE.matcher(line);
            assertTrue(x.matches(), "report line: " + line);
            assertEquals(null, m.put(x.group(2), x.group(1)), "path reported twice: " + line);
        }
        return m;
    }

    /** Fails with the paths missing over NFS, those only there and those that differ (first 20 of each). */
    static void assertSameReport(Map<String, String> fuse, Map<String, String> nfs) {
        List<String> missing = fuse.keySet().stream().filter(k -> !nfs.containsKey(k)).limit(20).toList();
        List<String> extra = nfs.keySet().stream().filter(k -> !fuse.containsKey(k)).limit(20).toList();
        List<String> differ = fuse.keySet().stream().filter(k -> nfs.containsKey(k) && !fuse.get(k).equals(nfs.get(k)))
                .limit(20).map(k -> k + ": FUSE " + fuse.get(k) + " / NFS " + nfs.get(k)).toList();
        assertTrue(missing.isEmpty() && extra.isEmpty() && differ.isEmpty(), fuse.size() + " paths on the FUSE mount, " + nfs.size()
                + " over NFS\nmissing over NFS: " + missing + "\nonly over NFS: " + extra + "\ndifferent:\n" + String.join("\n", differ));
    }

    /** {@code report.sh KIND} on the FUSE mount (returned) and on the guest's NFS mount must be equal. */
    static Map<String, String> sameReportOnBothMounts(String kind) throws Exception {
        // both sides at once: the guest's emulated CPU and the host's reads of the FUSE mount use different cores
        CompletableFuture<List<String>> host = CompletableFuture.supplyAsync(() -> {
            try {
                return hostReport(kind, mount.mountpoint);
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        });
        List<String> overNfs = guestReport(kind, "/mnt");
        Map<String, String> fuse = byPath(host.join());
        assertSameReport(fuse, byPath(overNfs));
        return fuse;
    }

    /** A list of names as a report: each name with the number of times it occurs. */
    static Map<String, String> asReport(List<String> names) {
        Map<String, String> m = new TreeMap<>();
        names.forEach(n -> m.merge(n, "1", (a, b) -> Integer.toString(Integer.parseInt(a) + 1)));
        return m;
    }

    @Test
    @Order(1)
    void everyFileReadsTheSameBytesAsOnTheFuseMount() throws Exception {
        Map<String, String> host = sameReportOnBothMounts("sums");
        long failed = host.values().stream().filter(v -> v.startsWith("ERR ")).count();
        assertTrue(host.size() - failed > 100, "files compared: " + host);
        assertTrue(failed >= 2, "the fixture's broken models fail on both: " + failed);
    }

    @Test
    @Order(2)
    void everyPathStatsAsOnTheFuseMount() throws Exception {
        // mode, size, inode number, mtime and ctime (ns), link count, owner
        Map<String, String> host = sameReportOnBothMounts("stats");
        assertTrue(host.size() > 300, "paths compared: " + host.size());
    }

    @Test
    @Order(3)
    void aFolderOf5000EntriesIsListedCompletelyOverManyReaddirplusCalls() throws Exception {
        List<String> expected = new ArrayList<>();   // the server lists no . and .. (docs/SEMANTICS.md)
        for (int i = 0; i < CROWD; i++) {
            expected.add(crowdName(i));
        }
        int before = readdirplusCalls("/many");
        List<String> names = guestReport("names", "/many/crowd");
        int calls = readdirplusCalls("/many") - before;
        assertSameReport(asReport(expected), asReport(names));
        assertEquals(expected, names);
        assertTrue(calls > 1, "the listing took " + calls + " READDIRPLUS calls; cookies are tested only across several");
    }

    /** How many READDIRPLUS calls the guest's NFS client made on the mount at {@code dir}. */
    static int readdirplusCalls(String dir) throws Exception {
        String out = requireOk(guest.run(30, "awk '/^device /{m=($5==\"" + dir + "\")} m && $1==\"READDIRPLUS:\"{print $2}' /proc/self/mountstats")).output();
        return Integer.parseInt(out.trim());
    }

    @Test
    @Order(4)
    void everyChangeIsRefusedReadOnly() throws Exception {
        // through the README's ro mount the client refuses by itself; through a rw mount modelfs refuses
        for (String dir : List.of("/mnt", "/rw")) {
            String m = dir + "/tinyllama";
            List<String> ops = List.of(
                    "touch " + dir + "/new-file",
                    "mkdir " + dir + "/new-dir",
                    "mknod " + dir + "/fifo p",
                    "ln -s x " + dir + "/link",
                    "ln " + m + "/model.gguf " + m + "/hard-link",
                    "rm -f " + m + "/model.gguf",
                    "rmdir " + m + "/ollama",
                    "mv " + m + " " + dir + "/renamed",
                    "mv " + m + "/model.gguf " + m + "/ollama/moved.gguf",
                    "chmod 644 " + m + "/model.gguf",
                    "chown 1:1 " + m + "/model.gguf",
                    "touch " + m + "/model.gguf",
                    "touch -d 2001-01-01 " + m);
            for (String op : ops) {
                QemuGuest.Result r = guest.run(60, op);
                assertTrue(r.exit() != 0 && r.output().contains("Read-only file system"), dir + ": " + op + " -> " + r.exit() + " " + r.output());
            }
            // opening for writing: the ro mount refuses by itself; modelfs's ACCESS grants only reading
            String refusal = dir.equals("/mnt") ? "Read-only file system" : "Permission denied";
            for (String op : List.of("echo x >> " + m + "/model.gguf", "echo x > " + m + "/model.gguf", "truncate -s 0 " + m + "/model.gguf")) {
                QemuGuest.Result r = guest.run(60, op);
                assertTrue(r.exit() != 0 && r.output().contains(refusal), dir + ": " + op + " -> " + r.exit() + " " + r.output());
            }
        }
        assertSameReport(byPath(hostReport("stats", mount.mountpoint)), byPath(guestReport("stats", "/rw")));
    }

    @Test
    @Order(5)
    void anOpenFileAndTheWorkingDirectoryReadOnAfterSigkillAndRestart() throws Exception {
        Path whole = mount.mountpoint.resolve(WHOLE_BLOB);
        Path converted = mount.mountpoint.resolve(CONVERTED);
        requireOk(guest.run(60, "cd /mnt/tinyllama && exec 3< model.gguf 4< '/mnt/" + CONVERTED + "'"
                + " && dd bs=4096 count=1 <&3 >/dev/null 2>&1 && dd bs=4096 count=1 <&4 >/dev/null 2>&1"));
        nfs.process.destroyForcibly();          // SIGKILL
        assertTrue(nfs.process.waitFor(30, TimeUnit.SECONDS));
        // the guest reads while the server is down (a hard mount waits) ...
        guest.send("echo 3 > /proc/sys/vm/drop_caches; sha256sum <&3");
        awaitClientKnocking(nfs.port);
        // ... and gets its bytes from a new server on the same port
        nfs = CliNfs.start(store, work.resolve("nfs-restarted.log"), nfs.port, "--refresh-ms", "100");
        assertEquals(List.of(sha256Hex(whole, 4096) + "  -"), requireOk(guest.await(300)).lines(), "open passthrough file, rest of it");
        assertEquals(List.of(sha256Hex(converted, 4096) + "  -"), requireOk(guest.run(300, "sha256sum <&4")).lines(), "open converted file, rest of it");
        assertEquals(List.of(sha256Hex(whole, 0) + "  model.gguf"), requireOk(guest.run(300, "sha256sum model.gguf")).lines(), "through the working directory");
        List<String> listing;
        try (Stream<Path> s = Files.list(mount.mountpoint.resolve("tinyllama"))) {
            listing = s.map(p -> p.getFileName().toString()).sorted().toList();
        }
        assertEquals(listing, requireOk(guest.run(60, "ls -1 | sort")).lines(), "the working directory's listing");
        requireOk(guest.run(60, "exec 3<&- 4<&- && cd /"));
    }

    /**
     * Returns once the guest's NFS client, which has a request to send, connects to {@code port} while no server is
     * there: the read is provably in flight while the server is down. The connection is accepted and closed at
     * once (as a dying server would), and the port is free again when this returns.
     */
    private static void awaitClientKnocking(int port) throws IOException {
        try (ServerSocket knock = new ServerSocket()) {
            knock.setReuseAddress(true);
            knock.bind(new InetSocketAddress("127.0.0.1", port));
            knock.setSoTimeout((int) TimeUnit.SECONDS.toMillis(120));
            knock.accept().close();
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the guest's NFS client did not reconnect to port " + port + " within 120 s of its read", e);
        }
    }

    @Test
    @Order(6)
    void aRemovedModelsHandlesAreStaleAndItLeavesTheListing() throws Exception {
        String file = REMOVED + "/ollama/config.json";
        requireOk(guest.run(60, "cd /mnt/" + REMOVED + " && exec 5< /mnt/" + file + " && ls /mnt | grep -x " + REMOVED));
        Files.delete(store.resolve("manifests/registry.ollama.ai/library/" + REMOVED + "/latest"));
        Poll.until("the FUSE mount unlists the model after its manifest was removed", Duration.ofSeconds(10),
                () -> !Files.exists(mount.mountpoint.resolve(REMOVED)));
        try (NfsRpcClient c = new NfsRpcClient(nfs.port)) {   // the NFS server's own rescan (every 100 ms) dropped it too
            byte[] root = c.mount("/").fh();
            Poll.until("the NFS server drops the removed model", Duration.ofSeconds(10), () -> c.lookup(root, REMOVED).status() != 0);
        }
        QemuGuest.Result read = guest.run(60, "cat <&5");
        assertTrue(read.exit() != 0 && read.output().contains("Stale file handle"), "read of an open file: " + read);
        QemuGuest.Result cwd = guest.run(60, "ls .");
        assertTrue(cwd.exit() != 0 && cwd.output().contains("Stale file handle"), "listing of the working directory: " + cwd);
        // The guest listed /mnt before the removal and keeps that listing until it sees the folder's
        // mtime change (docs/SEMANTICS.md): no caches are dropped, the listing must update by itself
        requireOk(guest.run(60, "cd / && exec 5<&-"));
        // (a stale cached listing makes ls fail: it lists the name, then stat of it gives ENOENT)
        QemuGuest.Result[] root = {null};
        Poll.until("the guest's listing without the removed model", Duration.ofSeconds(LISTING_UPDATE_SECONDS), () -> {
            root[0] = guest.run(60, "ls -1 /mnt");
            return root[0].exit() == 0 && !root[0].lines().contains(REMOVED);
        }, () -> "still: " + root[0]);
        assertTrue(root[0].lines().contains("tinyllama"), "the others are: " + root[0]);
    }
}
