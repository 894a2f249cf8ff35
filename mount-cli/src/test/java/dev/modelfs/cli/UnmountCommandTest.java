package dev.modelfs.cli;

import static dev.modelfs.cli.CommandsTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code unmount} and its alias {@code umount} refuse a path that is not a mount point, touching nothing. */
class UnmountCommandTest {
    @TempDir
    Path dir;

    @Test
    void notAMountPoint() {
        CommandsTest.Result r = run("umount", dir.toString());
        assertEquals(Main.FAILURE, r.exit());
        assertTrue(r.err().contains("is not mounted"), r.err());
        assertEquals(Main.USAGE, run("unmount").exit(), "the mount point is required");
    }
}
