package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.testing.Poll;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code modelfs nfs} read by real clients: libnfs's {@code nfs-ls}/{@code nfs-cat}/{@code nfs-cp}
 * and a small RFC 1813 client on the RPC library, compared with the FUSE mount of the same store.
 */
class NfsServerTest {
    /** The FUSE mount the NFS answers are compared with (unmounted after the server below has stopped). */
    @RegisterExtension
    static final MountedStore mounted = MountedStore.of("modelfs-nfs-it", work -> {
        CliNfs.requireClients();
        return Fixture.store();
    });
    static CliNfs nfs;

    @BeforeAll
    static void serve() throws Exception {
        nfs = CliNfs.start(Fixture.store(), mounted.work().resolve("nfs.log"), CliNfs.freePort());
    }

    @AfterAll
    static void stop() throws Exception {
        if (nfs != null) {
            nfs.close();
        }
    }

    static List<Path> mountFiles() throws IOException {
        try (Stream<Path> s = Files.walk(mounted.cli().mountpoint)) {
            return s.filter(Files::isRegularFile).sorted().toList();
        }
    }

    @Test
    void everyFileReadsTheSameBytesAsOnTheFuseMount() throws Exception {
        int same = 0, failedBoth = 0;
        for (Path f : mountFiles()) {
            String rel = mounted.cli().mountpoint.relativize(f).toString();
            byte[] fuse;
            try {
                fuse = Files.readAllBytes(f);
            } catch (IOException e) {
                fuse = null;       // a broken model's file: NFS must fail it too
            }
            CliNfs.Out cat = CliNfs.run(60, "nfs-cat", nfs.url(rel));
            if (fuse == null) {
                assertNotEquals(0, cat.exit(), rel + " fails on the mount but nfs-cat read it");
                failedBoth++;
            } else {
                assertEquals(0, cat.exit(), rel + ": " + cat.stderr());
                assertArrayEquals(fuse, cat.stdout(), rel);
                same++;
            }
        }
        assertTrue(same > 100, "files compared: " + same);
        assertTrue(failedBoth >= 2, "the fixture's broken models fail over NFS too: " + failedBoth);
    }

    private static final Pattern LS_LINE = Pattern.compile("^([-dlr-][-rwxsStT]{9})\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s(.*)$");

    @Test
    void recursiveListingsSizesAndModesMatchTheMount() throws Exception {
        CliNfs.Out ls = CliNfs.run(120, "nfs-ls", "-R", nfs.url(""));
        assertEquals(0, ls.exit(), ls.stderr());
        Map<String, String> overNfs = new TreeMap<>();
        for (String line : new String(ls.stdout(), StandardCharsets.UTF_8).split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            Matcher m = LS_LINE.matcher(line);
            assertTrue(m.matches(), "nfs-ls line: " + line);
            String name = m.group(6);
            if (name.equals(".") || name.equals("..") || name.endsWith("/.") || name.endsWith("/..")) {
                continue;
            }
            overNfs.put(name, m.group(1) + " " + m.group(5));
        }
        Map<String, String> onMount = new TreeMap<>();
        try (Stream<Path> s = Files.walk(mounted.cli().mountpoint)) {
            for (Path p : s.filter(p -> !p.equals(mounted.cli().mountpoint)).toList()) {
                String mode = (Files.isDirectory(p) ? "d" : "-") + PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
                onMount.put(mounted.cli().mountpoint.relativize(p).toString(), mode + " " + Files.size(p));
            }
        }
        assertEquals(onMount, overNfs);
        assertTrue(overNfs.containsKey("hf.co/bartowski/Tiny-GGUF:Q4_K_M/model.fp32.gguf"), "nested names with ':'");
        assertTrue(onMount.size() > 200, "entries: " + onMount.size());
    }

    static final String CONVERTED = "hf.co/bartowski/Tiny-GGUF:Q4_K_M/model.fp32.gguf";
    static final String WHOLE_BLOB = "tinyllama/model.gguf";

    @Test
    void handlesSurviveARestartAndWorkOnAnotherServerOverTheSameStore(@TempDir Path tmp) throws Exception {
        int port = CliNfs.freePort();
        byte[] converted, whole;
        byte[] expectConverted = Files.readAllBytes(mounted.cli().mountpoint.resolve(CONVERTED));
        byte[] expectWhole = Files.readAllBytes(mounted.cli().mountpoint.resolve(WHOLE_BLOB));
        try (CliNfs first = CliNfs.start(Fixture.store(), tmp.resolve("a.log"), port);
             NfsRpcClient c = new NfsRpcClient(port)) {
            NfsRpcClient.Fh root = c.mount("/");
            assertEquals(0, root.status());
            converted = c.walk(root.fh(), CONVERTED);
            whole = c.walk(root.fh(), WHOLE_BLOB);
            assertArrayEquals(expectConverted, c.readAll(converted, 65536));
        }
        try (CliNfs restarted = CliNfs.start(Fixture.store(), tmp.resolve("b.log"), port);
             NfsRpcClient c = new NfsRpcClient(port)) {
            assertArrayEquals(expectConverted, c.readAll(converted, 65536), "handle taken before the restart");
            assertArrayEquals(expectWhole, c.readAll(whole, 1 << 20));
        }
        int other = CliNfs.freePort();
        try (CliNfs another = CliNfs.start(Fixture.store(), tmp.resolve("c.log"), other);
             NfsRpcClient c = new NfsRpcClient(other)) {
            assertArrayEquals(expectWhole, c.readAll(whole, 32768), "handle from one server read on another");
        }
    }

    @Test
    void dotDotLooksUpTheParentAtEveryLevel() throws Exception {
        try (NfsRpcClient c = new NfsRpcClient(nfs.port)) {
            byte[] root = c.mount("/").fh();
            assertArrayEquals(root, c.lookup(root, "..").fh(), "the root is its own parent");
            String model = "hf.co/bartowski/Tiny-GGUF:Q4_K_M";
            // namespace dirs, a model dir, a dir inside a model: each one's .. is the handle LOOKUP gave its parent
            List<String> chain = List.of("hf.co", "hf.co/bartowski", model, model + "/ollama");
            byte[] parent = root;
            for (String dir : chain) {
                byte[] fh = c.walk(root, dir);
                NfsRpcClient.Fh up = c.lookup(fh, "..");
                assertEquals(0, up.status(), dir + "/..");
                assertArrayEquals(parent, up.fh(), dir + "/.. is " + (parent == root ? "the root" : "its parent"));
                parent = fh;
            }
            assertEquals(20, c.lookup(c.walk(root, WHOLE_BLOB), "..").status(), "NFS3ERR_NOTDIR: a file has no ..");
        }
    }

    @Test
    void aRemovedModelsHandlesAreStaleAndForeignHandlesBad(@TempDir Path tmp) throws Exception {
        Path store = Fixture.copyStore(tmp.resolve("store"));
        int port = CliNfs.freePort();
        try (CliNfs s = CliNfs.start(store, tmp.resolve("nfs.log"), port, "--refresh-ms", "100");
             NfsRpcClient c = new NfsRpcClient(port)) {
            byte[] root = c.mount("/").fh();
            byte[] file = c.walk(root, WHOLE_BLOB);
            byte[] dir = c.walk(root, "tinyllama");
            assertEquals(0, c.read(file, 0, 100).status());
            Files.delete(store.resolve("manifests/registry.ollama.ai/library/tinyllama/latest"));
            Poll.until("the model unlisted after its manifest was removed", Duration.ofSeconds(10),
                    () -> c.lookup(root, "tinyllama").status() != 0);
            assertEquals(NfsRpcClient.NFS3ERR_STALE, c.read(file, 0, 100).status());
            assertEquals(NfsRpcClient.NFS3ERR_STALE, c.status(1, x -> x.xdrEncodeDynamicOpaque(dir)));
            assertEquals(0, c.lookup(root, "tiny-st").status(), "other models are untouched");
            byte[] foreign = new byte[32];
            assertEquals(NfsRpcClient.NFS3ERR_BADHANDLE, c.status(1, x -> x.xdrEncodeDynamicOpaque(foreign)));
        }
    }

    @Test
    void brokenModelsFailAloneWithNoentOrIo() throws Exception {
        try (NfsRpcClient c = new NfsRpcClient(nfs.port)) {
            byte[] root = c.mount("/").fh();
            assertEquals(2, c.read(c.walk(root, "missing-blob/model.gguf"), 0, 4096).status(), "missing blob: NFS3ERR_NOENT");
            assertEquals(2, c.read(c.walk(root, "st-missing/tensors/b.weight.safetensors"), 0, 4096).status(),
                    "missing tensor blob: NFS3ERR_NOENT");
            assertEquals(5, c.read(c.walk(root, "truncated/model.gguf"), 0, 4096).status(), "blob of the wrong size: NFS3ERR_IO");
            assertEquals(0, c.read(c.walk(root, WHOLE_BLOB), 0, 4096).status(), "other models still read");
            assertEquals(2, c.lookup(root, "no-such-model").status(), "NFS3ERR_NOENT for a name that does not exist");
        }
    }

    @Test
    void writesCreatesRemovesAndRenamesAreRefusedReadOnly(@TempDir Path tmp) throws Exception {
        try (NfsRpcClient c = new NfsRpcClient(nfs.port)) {
            byte[] root = c.mount("/").fh();
            byte[] file = c.walk(root, WHOLE_BLOB);
            byte[] dir = c.walk(root, "tinyllama");
            int rofs = NfsRpcClient.NFS3ERR_ROFS;
            assertEquals(rofs, c.status(7, x -> {           // WRITE
                x.xdrEncodeDynamicOpaque(file);
                x.xdrEncodeLong(0);
                x.xdrEncodeInt(4);
                x.xdrEncodeInt(2);                          // FILE_SYNC
                x.xdrEncodeDynamicOpaque(new byte[] {1, 2, 3, 4});
            }), "WRITE");
            assertEquals(rofs, c.status(8, x -> {           // CREATE
                x.xdrEncodeDynamicOpaque(dir);
                x.xdrEncodeString("new-file");
                x.xdrEncodeInt(0);                          // UNCHECKED
                NfsRpcClient.noAttrs(x);
            }), "CREATE");
            assertEquals(rofs, c.status(9, x -> {           // MKDIR
                x.xdrEncodeDynamicOpaque(dir);
                x.xdrEncodeString("new-dir");
                NfsRpcClient.noAttrs(x);
            }), "MKDIR");
            assertEquals(rofs, c.status(12, x -> {          // REMOVE
                x.xdrEncodeDynamicOpaque(dir);
                x.xdrEncodeString("model.gguf");
            }), "REMOVE");
            assertEquals(rofs, c.status(14, x -> {          // RENAME
                x.xdrEncodeDynamicOpaque(dir);
                x.xdrEncodeString("model.gguf");
                x.xdrEncodeDynamicOpaque(dir);
                x.xdrEncodeString("renamed.gguf");
            }), "RENAME");
            assertEquals(rofs, c.status(2, x -> {           // SETATTR
                x.xdrEncodeDynamicOpaque(file);
                NfsRpcClient.noAttrs(x);
                x.xdrEncodeBoolean(false);
            }), "SETATTR");
            assertEquals(0, c.read(file, 0, 16).status(), "reads still work");
        }
        Path local = Files.writeString(tmp.resolve("local.txt"), "hello");
        CliNfs.Out cp = CliNfs.run(60, "nfs-cp", local.toString(), nfs.url("tinyllama/new.txt"));
        assertNotEquals(0, cp.exit(), "nfs-cp into the export must fail");
        CliNfs.Out ls = CliNfs.run(60, "nfs-ls", nfs.url("tinyllama"));
        assertTrue(!new String(ls.stdout(), StandardCharsets.UTF_8).contains("new.txt"), "nothing was created");
    }

    @Test
    void clientsOutsideAllowAreRefused(@TempDir Path tmp) throws Exception {
        int port = CliNfs.freePort();
        byte[] rootHandle;
        try (NfsRpcClient c = new NfsRpcClient(nfs.port)) {
            rootHandle = c.mount("/").fh();
        }
        try (CliNfs s = CliNfs.start(Fixture.store(), tmp.resolve("deny.log"), port, "--allow", "10.11.12.0/24,fd00::/8")) {
            CliNfs.Out ls = CliNfs.run(60, "nfs-ls", CliNfs.url("", port));
            assertNotEquals(0, ls.exit(), "nfs-ls from 127.0.0.1 outside --allow");
            assertThrows(Exception.class, () -> {
                try (NfsRpcClient c = new NfsRpcClient(port)) {
                    c.mount("/");
                }
            }, "a refused peer's connection is closed as it is accepted: MNT gets no answer");
            assertThrows(Exception.class, () -> {
                try (NfsRpcClient c = new NfsRpcClient(port)) {
                    c.read(c.walk(rootHandle, WHOLE_BLOB), 0, 10);
                }
            }, "nor does a call with a known handle");
            assertTrue(s.log().contains("client 127.0.0.1: refused, not in --allow"), s.log());
        }
        int port2 = CliNfs.freePort();
        try (CliNfs s = CliNfs.start(Fixture.store(), tmp.resolve("allow.log"), port2, "--allow", "10.0.0.0/8,127.0.0.0/8")) {
            CliNfs.Out cat = CliNfs.run(60, "nfs-cat", CliNfs.url(WHOLE_BLOB, port2));
            assertEquals(0, cat.exit(), cat.stderr());
            assertArrayEquals(Files.readAllBytes(mounted.cli().mountpoint.resolve(WHOLE_BLOB)), cat.stdout());
        }
    }

    @Test
    void daemonModeServesFromABackgroundProcess(@TempDir Path tmp) throws Exception {
        int port = CliNfs.freePort();
        Env.Run up = Env.run(120, CliMount.command("nfs", "--daemon", "--store", Fixture.store().toString(),
                "--port", Integer.toString(port), "--log", tmp.resolve("daemon.log").toString()));
        Matcher pid = Pattern.compile("\\(pid (\\d+),").matcher(up.output());
        assertTrue(pid.find(), up.output());
        ProcessHandle daemon = ProcessHandle.of(Long.parseLong(pid.group(1))).orElseThrow();
        try {
            assertEquals(0, up.exit(), up.output());
            assertTrue(up.output().contains("serving NFS"), up.output());
            CliNfs.Out cat = CliNfs.run(60, "nfs-cat", CliNfs.url(WHOLE_BLOB, port));
            assertEquals(0, cat.exit(), cat.stderr());
            assertArrayEquals(Files.readAllBytes(mounted.cli().mountpoint.resolve(WHOLE_BLOB)), cat.stdout());
        } finally {
            daemon.destroy();
            daemon.onExit().get(30, TimeUnit.SECONDS);
        }
        assertTrue(Files.readString(tmp.resolve("daemon.log")).contains("NFS server stopped"));
    }

    @Test
    void eightConcurrentNfsCatReadersOfALargeFileGetTheRightBytes(@TempDir Path tmp) throws Exception {
        Path store = Fixture.copyStore(tmp.resolve("store"));
        String expected = addLargeModel(store, "big", 96 << 20);
        int port = CliNfs.freePort();
        try (CliNfs s = CliNfs.start(store, tmp.resolve("nfs.log"), port)) {
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<String>> sums = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    sums.add(pool.submit(() -> sha256OfOutput("nfs-cat", CliNfs.url("big/ollama/license", port))));
                }
                for (Future<String> f : sums) {
                    assertEquals(expected, f.get(300, TimeUnit.SECONDS));
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /** Adds model {@code name} whose license layer is {@code size} pseudo-random bytes; returns their sha256. */
    static String addLargeModel(Path store, String name, int size) throws Exception {
        byte[] config = "{\"model_format\":\"gguf\",\"model_family\":\"llama\"}".getBytes(StandardCharsets.UTF_8);
        String cfg = writeBlob(store, config);
        byte[] big = new byte[size];
        new Random(42).nextBytes(big);
        String lic = writeBlob(store, big);
        String manifest = "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
                + "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" + cfg
                + "\",\"size\":" + config.length + "},\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.license\","
                + "\"digest\":\"sha256:" + lic + "\",\"size\":" + size + "}]}";
        Path m = store.resolve("manifests/registry.ollama.ai/library/" + name + "/latest");
        Files.createDirectories(m.getParent());
        Files.writeString(m, manifest);
        return lic;
    }

    static String writeBlob(Path store, byte[] data) throws Exception {
        String hex = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        Files.write(store.resolve("blobs/sha256-" + hex), data);
        return hex;
    }

    static String sha256OfOutput(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        try (InputStream in = p.getInputStream()) {
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
        }
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "nfs-cat finished");
        assertEquals(0, p.exitValue(), String.join(" ", cmd));
        return HexFormat.of().formatHex(md.digest());
    }
}
