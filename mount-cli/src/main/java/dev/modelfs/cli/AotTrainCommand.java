package dev.modelfs.cli;

import dev.modelfs.fuse.MountOptions;
import dev.modelfs.fuse.MountSession;
import dev.modelfs.nfs.LoopbackWarmup;
import dev.modelfs.nfs.NfsServer;
import dev.modelfs.serve.ServedTree;
import dev.modelfs.serve.StandardViews;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.warmup.KernelWarmup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/**
 * {@code modelfs aot-train} (hidden): the training run of an AOT cache (JDK 25 {@code -XX:AOTCacheOutput}: the
 * launcher's, scripts/lib.sh {@code aot_flags}, and the Debian package's, scripts/package.sh), the start-up of both
 * front ends on {@code demo}'s sample store, so that the classes they load, and the profiles of what they run first,
 * are in the cache. Mounts the sample store (where FUSE is usable) and lists every view as {@code demo} does; then
 * serves it over NFS on 127.0.0.1 (a server of the warm-up's kind: a free port, never published to rpcbind) and READs
 * its files without conversions through the warm-up's loopback client; then removes the sample store.
 *
 * <p>Invariants: leaves no mount and no sample store behind; a part that cannot run (no FUSE here) is skipped with
 * one line; exits 0 when at least one part ran, else 1.
 */
@Command(name = "aot-train", hidden = true,
        description = "The training run of the AOT cache: mount and serve over NFS the sample store of demo, list and read it.")
final class AotTrainCommand implements Callable<Integer> {
    @Override
    public Integer call() throws Exception {
        Path base = Files.createTempDirectory("modelfs-aot-train-");
        int ran = 0;
        try {
            Path store = base.resolve("store");
            new DemoStore(store).write();
            OllamaStore st = new OllamaStore(store);
            Path mp = Files.createDirectories(base.resolve("mnt"));
            MountSession session = null;
            try {
                session = MountSession.mount(st, mp, new MountOptions(false, UnixIds.uid(), UnixIds.gid(), List.of(), 64L << 20, 250,
                        false, MountOptions.defaultThreads()), StandardViews.all());
                DemoCommand.list(mp);
                ran++;
            } catch (Exception e) {
                System.out.println("aot-train: no FUSE mount here (" + e.getMessage() + "); the NFS part only");
            } finally {
                if (session != null) {
                    session.close();
                }
            }
            int uid = (int) UnixIds.uid(), gid = (int) UnixIds.gid();
            try (ServedTree served = ServedTree.open(st, StandardViews.all(), 64L << 20, 250);
                 NfsServer server = NfsServer.forWarmup(served, uid, gid)) {
                List<String> files = KernelWarmup.plainFilesToRead(served.tree(), 8).stream().map(Path::toString).toList();
                System.out.println("aot-train: NFS READs of " + LoopbackWarmup.run(server.address(), files, uid, gid, () -> false) + " files");
                ran++;
            }
        } finally {
            DemoCommand.deleteTree(base);
        }
        return ran > 0 ? 0 : 1;
    }
}
