package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every command of the CLI, run in this JVM over the demo store (the commands that mount fail before mounting). */
class CommandsTest {
    @TempDir
    Path dir;
    Path store;

    record Result(int exit, String out, String err) {}

    @BeforeEach
    void demoStore() throws IOException {
        store = dir.resolve("store");
        new DemoStore(store).write();
    }

    static synchronized Result run(String... args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        System.setOut(new PrintStream(o, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(e, true, StandardCharsets.UTF_8));
        try {
            int code = Main.run(args);
            return new Result(code, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
    }

    @Test
    void lsListsEveryModelWithItsFormat() {
        Result r = run("ls", "--store", store.toString());
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertTrue(lines.getFirst().startsWith("NAME"), r.out());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("demo-llama:latest ") && l.contains("gguf")), r.out());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("demo-st:int4 ") && l.contains("safetensors")), r.out());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("x/demo-image")), r.out());
    }

    @Test
    void showDescribesAModelAndItsTensorsAsJson() throws IOException {
        Result r = run("show", "--store", store.toString(), "--tensors", "--json", "demo-st:int4");
        assertEquals(0, r.exit(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        assertTrue(j.toString().contains("model.embed_tokens.weight"), r.out());
        Result missing = run("show", "--store", store.toString(), "no-such-model");
        assertEquals(Main.FAILURE, missing.exit());
        assertTrue(missing.err().contains("no-such-model"), missing.err());
    }

    @Test
    void verifyPassesAnIntactStoreAndNamesACorruptBlob() throws IOException {
        assertEquals(0, run("verify", "--store", store.toString()).exit());
        Path blob;
        try (Stream<Path> s = Files.list(store.resolve("blobs"))) {
            blob = s.filter(p -> {
                try {
                    return Files.size(p) > 1000;
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }).findFirst().orElseThrow();
        }
        byte[] b = Files.readAllBytes(blob);
        b[b.length / 2] ^= 1;
        Files.write(blob, b);
        Result r = run("verify", "--store", store.toString());
        assertEquals(1, r.exit(), r.out() + r.err());
        String name = blob.getFileName().toString().substring("sha256-".length(), "sha256-".length() + 12);
        assertTrue((r.out() + r.err()).contains(name), "the corrupt blob is named: " + r.out() + r.err());
    }

    @Test
    void unmountRefusesADirectoryThatIsNotMounted() throws IOException {
        Path d = Files.createDirectory(dir.resolve("plain"));
        Result r = run("unmount", d.toString());
        assertEquals(Main.FAILURE, r.exit());
        assertTrue(r.err().contains("is not mounted"), r.err());
    }

    @Test
    void mountRefusesAMissingMountPointBeforeMounting() {
        Result r = run("mount", "--store", store.toString(), dir.resolve("nowhere").toString());
        assertEquals(Main.FAILURE, r.exit());
        assertTrue(r.err().contains("must be an existing directory"), r.err());
    }

    @Test
    void nfsRefusesABadAllowListAndAPortInUse() throws IOException {
        Result bad = run("nfs", "--store", store.toString(), "--allow", "not-a-network");
        assertEquals(Main.USAGE, bad.exit());
        assertTrue(bad.err().contains("--allow"), bad.err());
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Result busy = run("nfs", "--store", store.toString(), "--bind", "127.0.0.1", "--port", String.valueOf(taken.getLocalPort()));
            assertEquals(Main.FAILURE, busy.exit());
            assertTrue(busy.err().contains("cannot serve NFS"), busy.err());
        }
    }

    @Test
    /** What {@code modelfs demo} mounts (its mount itself is DemoCommandTest's, in the integration tests). */
    void demoWritesAStoreOfThreeModels() throws IOException {
        Path other = dir.resolve("other");
        new DemoStore(other).write();
        Result r = run("ls", "--store", other.toString());
        assertEquals(4, r.out().lines().count(), "a header and three models: " + r.out());
        assertEquals(0, run("verify", "--store", other.toString()).exit(), "every blob the demo writes matches its digest");
    }
}
