package dev.modelfs.cli;

import static dev.modelfs.cli.CommandsTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ls}: one line per model with its quantization; {@code list} is the same; no store is an error. */
class LsCommandTest {
    @TempDir
    Path dir;

    @Test
    void quantizationColumnAndAlias() throws IOException {
        new DemoStore(dir).write();
        CommandsTest.Result r = run("ls", "--store", dir.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("demo-llama:latest ") && l.contains(" Q8_0")), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("demo-st:int4 ") && l.contains(" int4")), r.out());
        assertEquals(r.out(), run("list", "--store", dir.toString()).out());
    }

    @Test
    void aMissingStoreIsAFailure() {
        CommandsTest.Result r = run("ls", "--store", dir.resolve("absent").toString());
        assertEquals(Main.FAILURE, r.exit());
        assertTrue(r.err().contains("no model store there"), r.err());
    }
}
