package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.fuse.MountTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the CLI refuses, and how (issue 21): {@code unmount} of a file system that is not modelfs, usage
 * errors named and exiting 1, a missing store refused by {@code mount}, a failed {@code demo} leaving
 * nothing behind, a broken model's reason kept out of {@code ls}'s columns. Runs the real CLI jar; the
 * tmpfs cases need root (./test runs as root) and fail without it.
 */
class CliRefusalsTest {
    @TempDir
    Path tmp;

    @Test
    void unmountRefusesATmpfsAndTheRootFileSystem() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("tmpfs"));
        mountTmpfs(dir);
        try {
            Env.Run r = Env.run(60, CliMount.command("unmount", dir.toString()));
            assertEquals(2, r.exit(), r.output());
            assertTrue(r.output().contains("is a tmpfs mount, not modelfs"), r.output());
            assertEquals(1, r.output().strip().lines().count(), "one line: " + r.output());
            assertTrue(MountTable.isMounted(dir), "the tmpfs is still mounted");
            Env.Run root = Env.run(60, CliMount.command("unmount", "--wait", "0", "/"));
            assertEquals(2, root.exit(), root.output());
            assertTrue(root.output().contains("not modelfs"), root.output());
        } finally {
            Env.run(60, List.of("umount", dir.toString()));
        }
    }

    @Test
    void usageErrorsNameTheOptionAndExitOne() throws Exception {
        Env.Run port = Env.run(60, CliMount.command("nfs", "--port", "99999"));
        assertEquals(1, port.exit(), port.output());
        assertTrue(port.output().contains("--port must be 0 to 65535, not 99999"), port.output());
        Env.Run threads = Env.run(60, CliMount.command("mount", "--threads", "0", tmp.toString()));
        assertEquals(1, threads.exit(), threads.output());
        assertTrue(threads.output().contains("--threads must be at least 1"), threads.output());
    }

    /** Through the {@code ./modelfs} launcher, which adds the Vector API module: a usage error is the one line. */
    @Test
    void aUsageErrorThroughTheLauncherPrintsNoIncubatorWarning() throws Exception {
        Path launcher = Path.of("..", "modelfs").toAbsolutePath().normalize();
        assertTrue(Files.isExecutable(launcher), launcher + " missing");
        // no AOT cache training in the background of the tests (LauncherAotCacheTest tests it in a folder of its own)
        Env.Run r = Env.run(120, List.of(launcher.toString(), "nfs", "--port", "99999"), java.util.Map.of("MODELFS_AOT", "off"));
        assertEquals(1, r.exit(), r.output());
        assertTrue(r.output().contains("--port must be 0 to 65535, not 99999"), r.output());
        assertFalse(r.output().contains("WARNING"), "only the usage error: " + r.output());
    }

    @Test
    void mountRefusesAStoreThatDoesNotExist() throws Exception {
        Path mp = Files.createDirectories(tmp.resolve("mnt"));
        Env.Run r = Env.run(60, CliMount.command("mount", "--store", tmp.resolve("no-such-store").toString(), mp.toString()));
        assertEquals(2, r.exit(), r.output());
        assertTrue(r.output().contains("no model store there"), r.output());
        assertFalse(MountTable.isMounted(mp), "nothing was mounted");
    }

    @Test
    void aDemoThatCannotMountLeavesNothingBehind() throws Exception {
        Path temp = Files.createDirectories(tmp.resolve("java-tmp"));
        Path busy = Files.createDirectories(tmp.resolve("busy"));
        mountTmpfs(busy);                                    // already a mount point: the demo cannot mount there
        try {
            List<String> cmd = new ArrayList<>(CliMount.command("demo", busy.toString()));
            cmd.add(1, "-Djava.io.tmpdir=" + temp);
            Env.Run r = Env.run(120, cmd);
            assertEquals(2, r.exit(), r.output());
            try (Stream<Path> left = Files.list(temp)) {
                assertEquals(List.of(), left.toList(), "the sample store is removed:\n" + r.output());
            }
        } finally {
            Env.run(60, List.of("umount", busy.toString()));
        }
    }

    @Test
    void lsKeepsABrokenModelsReasonOutOfTheTable() throws Exception {
        Path store = tmp.resolve("store");
        SmallStore.addModel(store, "good", 1000, 1);
        Path broken = store.resolve("manifests/registry.ollama.ai/library/broken/latest");
        Files.createDirectories(broken.getParent());
        Files.writeString(broken, "{\"schemaVersion\": 2, \"layers\": [" + "\"x\", ".repeat(50) + "]}");
        Env.Run r = Env.run(60, CliMount.command("ls", "--store", store.toString()));
        assertEquals(0, r.exit(), r.output());
        List<String> table = r.output().lines().filter(l -> !l.startsWith("modelfs:") && !l.startsWith("WARNING")).toList();
        assertEquals(3, table.size(), r.output());
        String row = table.stream().filter(l -> l.startsWith("broken")).findFirst().orElseThrow();
        assertTrue(row.matches("broken\\S*\\s+-\\s+-\\s+invalid\\s+-"), "the broken row: '" + row + "'");
        for (String l : table) {
            assertTrue(l.length() <= table.getFirst().length() + 20, "no row is widened by an error text: '" + l + "'");
        }
        assertTrue(r.output().lines().anyMatch(l -> l.startsWith("modelfs: broken:latest: manifest is not valid JSON")), "the reason, below: " + r.output());
    }

    private static void mountTmpfs(Path dir) throws Exception {
        Env.Run m = Env.run(60, List.of("mount", "-t", "tmpfs", "-o", "size=1m", "modelfs-test", dir.toString()));
        assertEquals(0, m.exit(), "mount -t tmpfs (needs root): " + m.output());
    }
}
