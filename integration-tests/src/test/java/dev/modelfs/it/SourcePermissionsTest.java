package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Never more readable than the source (issue 21): in a root-owned store (Ollama run as root), a blob
 * linked to a root-owned 0640 or 0600 file passes the trust rule (same owner) but must not become
 * readable by everyone. The store is mounted {@code -o allow_other} by the real CLI and read as user
 * {@code nobody} through {@code setpriv}: EACCES for every file of such a model, the blob's bytes for a
 * model whose blobs are world-readable. Needs root (./test runs as root) and fails without it.
 */
class SourcePermissionsTest {
    private Path base;
    private CliMount mount;

    @AfterEach
    void cleanUp() throws Exception {
        if (mount != null) {
            mount.close();
        }
        if (base != null) {
            Fixture.deleteTree(base);
        }
    }

    @Test
    void aLinkToARootOnlyFileIsNotReadableByOthersOnTheMount() throws Exception {
        assertEquals("root", System.getProperty("user.name"), "this test needs root: ./test runs as root");
        base = Files.createTempDirectory(Path.of("/tmp"), "modelfs-perm-");
        Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path store = base.resolve("store");
        Path open = SmallStore.addModel(store, "open", 4096, 1);
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
        linkToPrivateCopy(SmallStore.addModel(store, "secret640", 4096, 2), base.resolve("secret640"), "rw-r-----");
        linkToPrivateCopy(SmallStore.addModel(store, "secret600", 4096, 3), base.resolve("secret600"), "rw-------");
        Path mp = base.resolve("mnt");
        mount = CliMount.start(store, mp, "-o", "allow_other");

        Env.Run ok = asNobody("sha256sum", mp.resolve("open/model.gguf").toString());
        assertEquals(0, ok.exit(), ok.output());
        assertTrue(ok.output().startsWith(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(open)))),
                "a world-readable blob is read by others: " + ok.output());
        for (String model : List.of("secret640", "secret600")) {
            for (String file : List.of("model.gguf", "ollama/Modelfile", "ollama/manifest.json")) {
                Env.Run denied = asNobody("cat", mp.resolve(model).resolve(file).toString());
                assertNotEquals(0, denied.exit(), model + "/" + file + " read by nobody: " + denied.output());
                assertTrue(denied.output().contains("Permission denied"), denied.output());
            }
        }
        assertEquals("r--r-----", mode(mp.resolve("secret640/model.gguf")));
        assertEquals("r--------", mode(mp.resolve("secret600/model.gguf")));
        assertEquals("r--r--r--", mode(mp.resolve("open/model.gguf")));
        assertArrayEquals(Files.readAllBytes(base.resolve("secret600")), Files.readAllBytes(mp.resolve("secret600/model.gguf")),
                "the owner still reads it");
    }

    /** Moves the blob's bytes to {@code target} (mode {@code perms}, outside the store) and links the blob to it. */
    private static void linkToPrivateCopy(Path blob, Path target, String perms) throws Exception {
        Files.move(blob, target);
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString(perms));
        Files.createSymbolicLink(blob, target);
    }

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    private static Env.Run asNobody(String... cmd) throws Exception {
        List<String> all = new java.util.ArrayList<>(List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"));
        all.addAll(List.of(cmd));
        return Env.run(60, all);
    }
}
