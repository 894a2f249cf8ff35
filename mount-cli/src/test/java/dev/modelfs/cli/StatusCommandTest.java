package dev.modelfs.cli;

import static dev.modelfs.cli.CommandsTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.cli.metrics.PrometheusTelemetry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code status}: reads a live metrics endpoint; a folder that is no metered mount and a non-address are refused. */
class StatusCommandTest {
    @TempDir
    Path dir;

    @Test
    void readsTheEndpointOfAnNfsServer() throws IOException {
        try (PrometheusTelemetry t = PrometheusTelemetry.serve(new InetSocketAddress("127.0.0.1", 0), true)) {
            String endpoint = t.endpoint().orElseThrow();
            CommandsTest.Result r = run("status", endpoint);
            assertEquals(0, r.exit(), r.err());
            assertTrue(r.out().startsWith("modelfs NFS server (metrics http://" + endpoint + "/metrics)"), r.out());
        }
    }

    @Test
    void aPlainFolderAndGarbageAreRefused() {
        CommandsTest.Result folder = run("status", dir.toString());
        assertEquals(Main.FAILURE, folder.exit());
        assertTrue(folder.err().contains("shows no metrics"), folder.err());
        CommandsTest.Result garbage = run("status", "not an address");
        assertEquals(Main.USAGE, garbage.exit());
        assertTrue(garbage.err().contains("neither a mount point nor ADDR:PORT"), garbage.err());
    }
}
