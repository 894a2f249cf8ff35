package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.fuse.MountTable;
import dev.modelfs.testing.Poll;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The foundation contract on a real FUSE mount of the generated fixture store. */
class MountTreeTest {
    @RegisterExtension
    static final MountedStore mounted = MountedStore.of("modelfs-it", work -> Fixture.store());

    @Test
    void pythonTreeCheckerPasses() throws Exception {
        mounted.cli().requireChecker(600, "check_tree.py", Fixture.dir().toString());
    }

    @Test
    void everyFolderHoldsOneWeightSet() throws Exception {
        mounted.cli().requireChecker(300, "check_one_weight_set.py");
    }

    @Test
    void pythonViewsCheckerPassesWithSafetensorsAndGgufPy() throws Exception {
        // the converted files below must come from the kernels users get (the launcher's Vector API ones)
        assertTrue(mounted.cli().log().contains("vector kernels ("), "mount runs scalar kernels:\n" + mounted.cli().log());
        mounted.cli().requireChecker(900, "check_views.py", Fixture.dir().toString());
    }

    @Test
    void transformersLoadsTheFp32VariantWithTheOriginalLogits() throws Exception {
        mounted.cli().requireChecker(900, "check_llama_e2e.py", Fixture.dir().toString());
    }

    /**
     * llama.cpp itself (node-llama-cpp's prebuilt CPU build) loads the original GGUF and every dequantized
     * variant through the mount and continues a fixed prompt greedily: the variants hold the same weights,
     * so their first tokens agree with the original's.
     */
    @Test
    void llamaCppLoadsTheOriginalAndEveryDequantizedGguf() throws Exception {
        Path dir = Path.of(System.getProperty("modelfs.nodeDir", "node")).toAbsolutePath();
        assertTrue(Files.isDirectory(dir.resolve("node_modules/node-llama-cpp")),
                "node-llama-cpp not installed in " + dir + " (./test installs it there)");
        List<String> files = List.of("model.gguf", "model.fp32.gguf", "model.fp16.gguf", "model.bf16.gguf");
        List<String> cmd = new java.util.ArrayList<>(List.of("node", dir.resolve("llama_generate.mjs").toString()));
        files.forEach(f -> cmd.add(mounted.cli().mountpoint.resolve("tinyllama").resolve(f).toString()));
        Env.Run r = Env.run(600, cmd);
        assertEquals(0, r.exit(), "llama.cpp run failed:\n" + r.output() + "\nmount log:\n" + mounted.cli().log());
        var om = new com.fasterxml.jackson.databind.ObjectMapper();
        List<List<Integer>> runs = new java.util.ArrayList<>();
        for (String line : r.output().lines().filter(l -> l.startsWith("{\"file\"")).toList()) {
            List<Integer> toks = new java.util.ArrayList<>();
            om.readTree(line).get("tokens").forEach(t -> toks.add(t.asInt()));
            runs.add(toks);
        }
        assertEquals(files.size(), runs.size(), "one continuation per file:\n" + r.output());
        for (int i = 0; i < runs.size(); i++) {
            assertEquals(12, runs.get(i).size(), files.get(i));
            assertTrue(runs.get(i).stream().allMatch(t -> t >= 0 && t < 288), files.get(i) + ": " + runs.get(i));
            assertEquals(runs.getFirst().subList(0, 4), runs.get(i).subList(0, 4),
                    files.get(i) + " continues differently from model.gguf: " + runs);
        }
    }

    @Test
    void inodesAreStableAcrossMountsAndSharedPerBlob() throws Exception {
        Map<String, Long> first = inodes(mounted.cli().mountpoint);
        assertTrue(first.size() > 50, "too few files on the mount: " + first.size());
        try (CliMount second = CliMount.start(Fixture.store(), mounted.work().resolve("mnt2"))) {
            assertEquals(first, inodes(second.mountpoint));
        }
        Map<String, Long> byDigest = new HashMap<>();
        int shared = 0;
        try (Stream<Path> files = Files.walk(mounted.cli().mountpoint)) {
            for (Path p : files.filter(Files::isRegularFile).toList()) {
                String digest = xattr(p, "user.modelfs.digest");
                if (digest != null) {
                    Long ino = (Long) Files.getAttribute(p, "unix:ino");
                    Long prev = byDigest.putIfAbsent(digest, ino);
                    if (prev != null) {
                        assertEquals(prev, ino, "two paths of blob " + digest + " differ in inode");
                        shared++;
                    }
                }
            }
        }
        assertTrue(shared > 0, "the fixture shares blobs between models; no shared inode was seen");
    }

    static Map<String, Long> inodes(Path root) throws IOException {
        Map<String, Long> out = new HashMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path p : files.toList()) {
                out.put(root.relativize(p).toString(), (Long) Files.getAttribute(p, "unix:ino"));
            }
        }
        return out;
    }

    static String xattr(Path p, String name) throws IOException {
        var view = Files.getFileAttributeView(p, java.nio.file.attribute.UserDefinedFileAttributeView.class);
        String n = name.substring("user.".length());
        try {
            if (!view.list().contains(n)) {
                return null;
            }
        } catch (java.nio.file.FileSystemException e) {
            return null;     // listing xattrs opens the file: a missing (ENOENT) or truncated (EIO) blob
        }
        ByteBuffer b = ByteBuffer.allocate(view.size(n));
        view.read(n, b);
        return new String(b.array(), 0, b.position());
    }

    @Test
    void statfsIsTheStoresFilesystemAndFilesSayWhereTheyComeFrom() throws Exception {
        var onMount = Files.getFileStore(mounted.cli().mountpoint);
        var store = Files.getFileStore(mounted.cli().store);
        assertEquals(store.getTotalSpace(), onMount.getTotalSpace(), "statfs reports the store's filesystem");
        assertTrue(onMount.isReadOnly(), "statfs flags the mount read-only");
        Path gguf = mounted.cli().mountpoint.resolve("tinyllama/model.gguf");
        assertTrue(xattr(gguf, "user.modelfs.digest").startsWith("sha256:"));
        assertTrue(xattr(gguf, "user.modelfs.source").contains("model layer"));
        assertTrue(xattr(mounted.cli().mountpoint.resolve("tinyllama/model.fp16.gguf"), "user.modelfs.source").contains("F16"));
        assertEquals(null, xattr(mounted.cli().mountpoint.resolve("tinyllama/model.fp16.gguf"), "user.modelfs.digest"),
                "converted files are no single blob");
    }

    @Test
    void everyMutationIsEROFS() {
        Path mp = mounted.cli().mountpoint;
        Path model = mp.resolve("tinyllama/model.gguf");
        assertTrue(Files.exists(model));
        assertErofs(() -> Files.write(mp.resolve("new-file"), new byte[1]));
        assertErofs(() -> Files.write(model, new byte[1], StandardOpenOption.APPEND));
        assertErofs(() -> Files.createDirectory(mp.resolve("tinyllama/newdir")));
        assertErofs(() -> Files.delete(model));
        assertErofs(() -> Files.move(model, mp.resolve("tinyllama/renamed.gguf")));
        assertErofs(() -> Files.setLastModifiedTime(model, java.nio.file.attribute.FileTime.fromMillis(0)));
    }

    interface IoAction {
        void run() throws IOException;
    }

    static void assertErofs(IoAction a) {
        FileSystemException e = assertThrows(FileSystemException.class, a::run);
        assertTrue(String.valueOf(e.getMessage()).contains("Read-only file system"), "expected EROFS, got " + e);
    }

    @Test
    void badModelsFailAloneWithTheRightErrno() throws Exception {
        Path mp = mounted.cli().mountpoint;
        assertFalse(Files.exists(mp.resolve("corrupt")), "a model with an unparsable manifest must be absent");
        Path missing = mp.resolve("missing-blob/model.gguf");
        assertTrue(Files.size(missing) > 0, "a missing blob keeps its manifest size");
        assertThrows(NoSuchFileException.class, () -> Files.newByteChannel(missing).close());
        Path truncated = mp.resolve("truncated/model.gguf");
        IOException e = assertThrows(IOException.class, () -> Files.readAllBytes(truncated));
        assertTrue(String.valueOf(e.getMessage()).contains("Input/output error"), "expected EIO, got " + e);
        assertTrue(Files.readString(mp.resolve("missing-blob/ollama/Modelfile")).startsWith("# Modelfile generated"));
        assertArrayEquals(Files.readAllBytes(mp.resolve("tinyllama/model.gguf")),
                Files.readAllBytes(blobOf(mp.resolve("tinyllama/model.gguf"))));
    }

    /** The store blob a passthrough file claims to be. */
    static Path blobOf(Path file) throws Exception {
        String d = xattr(file, "user.modelfs.digest");
        assertTrue(d != null && d.startsWith("sha256:"), "no digest xattr on " + file);
        Path p = mounted.cli().store.resolve("blobs/sha256-" + d.substring(7));
        return Files.exists(p) ? p : mounted.cli().store.resolve("blobs/sha256:" + d.substring(7));
    }

    @Test
    void liveAddRemoveAndRepullWithoutRemount(@TempDir Path tmp) throws Exception {
        Path store = Fixture.copyStore(tmp.resolve("store"));
        try (CliMount m = CliMount.start(store, tmp.resolve("mnt"))) {
            Path manifests = store.resolve("manifests/registry.ollama.ai/library");
            Path tiny = manifests.resolve("tinyllama/latest");
            Path other = store.resolve("manifests/registry.ollama.ai/library/llama3.2/1b");
            assertTrue(Files.exists(tiny) && Files.exists(other), "fixture models tinyllama and llama3.2:1b expected");

            // add
            Files.createDirectories(manifests.resolve("added"));
            Files.copy(tiny, manifests.resolve("added/v2"));
            awaitTrue("new model visible", () -> Files.exists(m.mountpoint.resolve("added:v2/model.gguf")));
            assertArrayEquals(Files.readAllBytes(m.mountpoint.resolve("tinyllama/model.gguf")),
                    Files.readAllBytes(m.mountpoint.resolve("added:v2/model.gguf")));

            // re-pull: an fd opened before keeps its bytes, new opens see the new manifest
            Path served = m.mountpoint.resolve("tinyllama/model.gguf");
            byte[] before = Files.readAllBytes(served);
            byte[] after = Files.readAllBytes(m.mountpoint.resolve("llama3.2:1b/model.gguf"));
            assertFalse(java.util.Arrays.equals(before, after), "fixture models must differ");
            try (FileChannel held = FileChannel.open(served)) {
                ByteBuffer head = ByteBuffer.allocate(16);
                held.read(head, 0);
                Files.copy(other, tiny, StandardCopyOption.REPLACE_EXISTING);
                awaitTrue("re-pulled model visible", () -> sizeOrMinus1(served) == after.length);
                // the kernel keeps one inode per path: once its 1 s attribute cache expires it asks the
                // open handle (fgetattr), which answers with the size of what this fd opened; until then a
                // read may stop at the re-pulled size, never give other bytes
                byte[][] last = {null};
                Poll.until("the open file reads all the bytes it opened", Duration.ofSeconds(10), () -> {
                    ByteBuffer all = ByteBuffer.allocate(before.length);
                    while (all.hasRemaining() && held.read(all, all.position()) > 0) { }
                    last[0] = java.util.Arrays.copyOf(all.array(), all.position());
                    assertArrayEquals(java.util.Arrays.copyOf(before, last[0].length), last[0], "an open file must keep serving the bytes it opened");
                    return last[0].length == before.length;
                }, () -> "it stops after " + last[0].length + " of " + before.length + " bytes");
            }
            assertArrayEquals(after, Files.readAllBytes(served), "a new open must serve the re-pulled model");

            // remove
            Files.delete(manifests.resolve("added/v2"));
            awaitTrue("removed model gone", () -> !Files.exists(m.mountpoint.resolve("added:v2")));
        }
    }

    static long sizeOrMinus1(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            return -1;
        }
    }

    static void awaitTrue(String what, BooleanSupplier cond) throws InterruptedException {
        Poll.until(what, Duration.ofSeconds(3), cond::getAsBoolean);
    }

    @Test
    void sigtermWithABusyReaderUnmountsCleanlyAndAStaleMountIsCleared(@TempDir Path tmp) throws Exception {
        Path mp = tmp.resolve("mnt");
        CliMount m = CliMount.start(Fixture.store(), mp);
        try (FileChannel busy = FileChannel.open(mp.resolve("tinyllama/model.gguf"))) {
            busy.read(ByteBuffer.allocate(100), 0);
            m.process.destroy();
            // the stop has begun (new opens refused) and waits for this reader, the mount still in place
            Poll.until("the stop waits for the open file", Duration.ofSeconds(30), () -> m.log().contains(": no new opens; serving the 1 open files"),
                    () -> CliMount.readQuietly(m.log));
            assertTrue(MountTable.isMounted(mp), "a busy mount is unmounted politely, after readers finish");
            busy.read(ByteBuffer.allocate(100), 0);   // still served
        }
        assertTrue(m.process.waitFor(20, TimeUnit.SECONDS), "exits once the reader is gone");
        assertEquals(0, m.process.exitValue(), m.log());
        assertFalse(MountTable.isMounted(mp));

        CliMount killed = CliMount.start(Fixture.store(), mp);
        killed.process.destroyForcibly().waitFor();
        assertTrue(MountTable.isMounted(mp) && MountTable.isStale(mp), "kill -9 leaves a stale mount");
        try (CliMount again = CliMount.start(Fixture.store(), mp)) {
            assertTrue(Files.isDirectory(mp.resolve("tinyllama")), "remount over a stale mount works");
        }
    }

    @Test
    void daemonModeMountsInTheBackgroundAndUnmountCommandStopsIt(@TempDir Path tmp) throws Exception {
        Env.requireFuse();
        Path mp = Files.createDirectories(tmp.resolve("mnt"));
        Env.Run up = Env.run(120, CliMount.command("mount", "--daemon", "--log", tmp.resolve("daemon.log").toString(),
                "--store", Fixture.store().toString(), mp.toString()));
        try {
            assertEquals(0, up.exit(), up.output());
            assertTrue(MountTable.isMounted(mp), "mounted when --daemon returns");
            assertTrue(Files.isRegularFile(mp.resolve("tinyllama/model.gguf")));
        } finally {
            Env.Run down = Env.run(120, CliMount.command("unmount", mp.toString()));
            assertEquals(0, down.exit(), down.output());
        }
        assertFalse(MountTable.isMounted(mp));
        Path log = tmp.resolve("daemon.log");     // the background process notices the unmount within a second
        Poll.until("the daemon notices the unmount", Duration.ofSeconds(30), () -> Files.readString(log).contains("unmounted externally"),
                () -> CliMount.readQuietly(log));
    }

    @Test
    void cliCommandsWithoutMounting() throws Exception {
        Env.Run ls = Env.run(60, CliMount.command("ls", "--store", Fixture.store().toString()));
        assertEquals(0, ls.exit(), ls.output());
        assertTrue(ls.output().contains("tinyllama:latest"), ls.output());
        assertTrue(ls.output().contains("hf.co/bartowski/Tiny-GGUF:Q4_K_M"), ls.output());
        Env.Run show = Env.run(60, CliMount.command("show", "--store", Fixture.store().toString(), "--tensors", "--json", "tiny-st"));
        assertEquals(0, show.exit(), show.output());
        String out = show.output();   // stdout and stderr (log lines) are merged here: the JSON is the object
        var json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out.substring(out.indexOf("\n{") + 1));
        assertEquals("tiny-st:latest", json.get("name").asText());
        List<String> types = new java.util.ArrayList<>();
        json.get("tensors").forEach(t -> types.add(t.path("type").asText()));
        for (String q : List.of("int4 g64", "int8 g64", "nvfp4 g16", "mxfp4 g32", "mxfp8 g32")) {
            assertTrue(types.contains(q), q + " missing from " + types);
        }
        Env.Run missing = Env.run(60, CliMount.command("show", "--store", Fixture.store().toString(), "no-such-model"));
        assertEquals(2, missing.exit(), missing.output());
        Env.Run bad = Env.run(60, CliMount.command("mount"));
        assertEquals(1, bad.exit(), "usage error exit code: " + bad.output());
        Env.Run notMounted = Env.run(60, CliMount.command("unmount", mounted.work().resolve("nowhere").toString()));
        assertEquals(2, notMounted.exit(), notMounted.output());
        assertEquals(1, notMounted.output().strip().lines().count(), "one-line error: " + notMounted.output());
        Env.Run version = Env.run(60, CliMount.command("--version"));
        assertEquals(0, version.exit());
        assertTrue(version.output().startsWith("modelfs "), version.output());
        assertNotEquals("", List.of(version.output()).getFirst());
    }
}
