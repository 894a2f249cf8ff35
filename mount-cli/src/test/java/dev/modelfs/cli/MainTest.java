package dev.modelfs.cli;

import static dev.modelfs.cli.CommandsTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The top-level command: help lists every subcommand, a usage error is exit 1 with one "modelfs:" line. */
class MainTest {
    @Test
    void helpListsEveryCommand() {
        CommandsTest.Result r = run("--help");
        assertEquals(0, r.exit(), r.err());
        for (String c : new String[] {"ls", "show", "verify", "mount", "unmount", "nfs", "demo"}) {
            assertTrue(r.out().lines().anyMatch(l -> l.strip().startsWith(c + " ") || l.strip().startsWith(c + ",")), c + " in " + r.out());
        }
        CommandsTest.Result v = run("--version");
        assertEquals(0, v.exit());
        assertTrue(v.out().contains("modelfs"), v.out());
    }

    @Test
    void anUnknownCommandOrOptionIsAUsageError() {
        CommandsTest.Result r = run("frobnicate");
        assertEquals(Main.USAGE, r.exit());
        assertTrue(r.err().startsWith("modelfs: "), r.err());
        assertEquals(Main.USAGE, run("ls", "--no-such-option").exit());
    }
}
