package dev.modelfs.cli;

import static dev.modelfs.cli.CommandsTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code mount}'s refusals before it mounts (the mount itself is the integration tests'). */
class MountCommandTest {
    @TempDir
    Path dir;

    @Test
    void readWriteBadSizesAndAFileAsMountPointAreRefused() throws IOException {
        new DemoStore(dir.resolve("store")).write();
        String store = dir.resolve("store").toString();
        Path mp = Files.createDirectory(dir.resolve("mnt"));
        CommandsTest.Result rw = run("mount", "--store", store, "-o", "rw", mp.toString());
        assertEquals(Main.USAGE, rw.exit());
        assertTrue(rw.err().contains("read-only"), rw.err());
        CommandsTest.Result size = run("mount", "--store", store, "--cache-size", "lots", mp.toString());
        assertEquals(Main.USAGE, size.exit());
        assertTrue(size.err().contains("not a size"), size.err());
        Path file = Files.writeString(dir.resolve("file"), "x");
        assertEquals(Main.FAILURE, run("mount", "--store", store, file.toString()).exit());
    }
}
