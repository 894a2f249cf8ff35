package dev.modelfs.cli;

import static dev.modelfs.cli.CommandsTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nfs}'s refusals before it serves (serving is NfsServerTest's, in the integration tests; a
 * store that does not exist yet is served, empty, so it is not a refusal).
 */
class NfsCommandTest {
    @TempDir
    Path dir;

    @Test
    void aBadSizeAndANetworkOutsideIpv4AreRefused() {
        CommandsTest.Result size = run("nfs", "--store", dir.toString(), "--port", "0", "--cache-size", "5X");
        assertEquals(Main.USAGE, size.exit());
        assertTrue(size.err().contains("not a size"), size.err());
        CommandsTest.Result cidr = run("nfs", "--store", dir.toString(), "--port", "0", "--allow", "10.0.0.0/33");
        assertEquals(Main.USAGE, cidr.exit());
        assertTrue(cidr.err().contains("--allow"), cidr.err());
    }
}
