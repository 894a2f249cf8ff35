package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.fuse.MountTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mount's read-ahead window ({@code --read-ahead-kb}, docs/SEMANTICS.md "Read-ahead"): by default a mount leaves
 * the kernel's 128 KiB; as root, it sets the window it is told; a daemon mount gets the window it was started with. The oracle is the kernel's own setting of the
 * mount's backing device, named by {@code mountpoint -d}.
 */
class ReadAheadWindowTest {
    @TempDir
    Path tmp;

    /** The kernel's read-ahead window of the file system mounted at {@code mp}, in KiB. */
    static int window(Path mp) throws Exception {
        Env.Run dev = Env.run(30, List.of("mountpoint", "-d", mp.toString()));
        assertEquals(0, dev.exit(), dev.output());
        return Integer.parseInt(Files.readString(Path.of("/sys/class/bdi", dev.output().trim(), "read_ahead_kb")).trim());
    }

    @Test
    void aMountLeavesTheKernelsWindowByDefaultAndSetsTheOneItIsTold() throws Exception {
        Path store = Fixture.store();
        try (CliMount m = CliMount.start(store, tmp.resolve("default"), "--no-warmup")) {
            assertEquals(128, window(m.mountpoint), "the kernel's window\n" + m.log());
        }
        try (CliMount m = CliMount.start(store, tmp.resolve("told"), "--no-warmup", "--read-ahead-kb", "1024")) {
            assertEquals(1024, window(m.mountpoint), m.log());
            assertTrue(Files.size(m.mountpoint.resolve("tinyllama/model.fp32.gguf")) > 0);
        }
    }

    @Test
    void aDaemonMountGetsTheWindowItWasStartedWith() throws Exception {
        Env.requireFuse();
        Path mp = Files.createDirectories(tmp.resolve("mnt"));
        Env.Run up = Env.run(120, CliMount.command("mount", "--daemon", "--no-cache-dir", "--no-warmup", "--read-ahead-kb",
                "4096", "--log", tmp.resolve("daemon.log").toString(), "--store", Fixture.store().toString(), mp.toString()));
        try {
            assertEquals(0, up.exit(), up.output());
            assertEquals(4096, window(mp), Files.readString(tmp.resolve("daemon.log")));
        } finally {
            Env.Run down = Env.run(120, CliMount.command("unmount", mp.toString()));
            assertEquals(0, down.exit(), down.output());
        }
        assertTrue(!MountTable.isMounted(mp));
    }

    @Test
    void aWindowOutOfRangeIsAUsageError() throws Exception {
        for (String kib : List.of("-1", "65537")) {
            Env.Run r = Env.run(60, CliMount.command("mount", "--read-ahead-kb", kib, tmp.toString()));
            assertEquals(1, r.exit(), r.output());
            assertTrue(r.output().contains("--read-ahead-kb must be between 0 and 65536, not " + kib), r.output());
        }
    }
}
