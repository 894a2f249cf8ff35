package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --daemon}'s re-run of this program: output goes to the log, and a child that exits before it is ready is an error. */
class BackgroundTest {
    @TempDir
    Path dir;

    @Test
    void theDefaultLogIsInTheUsersCache() {
        assertEquals(Path.of(System.getProperty("user.home"), ".cache", "modelfs", "nfs-2049.log"), Background.defaultLog("nfs-2049"));
    }

    @Test
    void aChildThatExitsBeforeItIsReadyIsAnErrorNamingItsLog() throws IOException {
        Path store = dir.resolve("store");
        new DemoStore(store).write();
        Path log = dir.resolve("logs/ls.log");
        IOException e = assertThrows(IOException.class, () -> Background.start(List.of("ls", "--store", store.toString()), log, () -> false));
        assertTrue(e.getMessage().contains("exited with 0") && e.getMessage().contains(log.toString()), e.getMessage());
        String out = Files.readString(log);
        assertTrue(out.contains("demo-llama:latest"), "the child ran this program's ls: " + out);
    }

    @Test
    void aReadyChildIsReturnedRunning() throws Exception {
        Path store = dir.resolve("store");
        new DemoStore(store).write();
        Path log = dir.resolve("verify.log");
        Process p = Background.start(List.of("verify", "--store", store.toString()), log, () -> true);
        try {
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the child finishes");
            assertEquals(0, p.exitValue(), Files.readString(log));
        } finally {
            p.destroyForcibly();
        }
    }
}
