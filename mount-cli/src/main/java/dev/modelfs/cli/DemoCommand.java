package dev.modelfs.cli;

import dev.modelfs.fuse.MountOptions;
import dev.modelfs.fuse.MountSession;
import dev.modelfs.fuse.MountTable;
import dev.modelfs.serve.StandardViews;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import sun.misc.Signal;

/** {@code modelfs demo}: write a small sample store, mount it, list what the mount shows. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Write a small sample store (one model of each kind), mount it and print its listing.")
final class DemoCommand implements Callable<Integer> {
    @Parameters(paramLabel = "MOUNTPOINT", arity = "0..1", description = "where to mount (default: a new temporary directory)")
    Path mountpoint;

    @Option(names = "--keep", description = "stay mounted until Ctrl-C or `modelfs unmount` instead of unmounting after the listing")
    boolean keep;

    @Override
    public Integer call() throws Exception {
        Path base = Files.createTempDirectory("modelfs-demo-");
        Path store = base.resolve("store");
        Path mp = mountpoint != null ? mountpoint.toAbsolutePath().normalize() : base.resolve("mnt");
        MountSession session;
        try {
            Files.createDirectories(mp);
            new DemoStore(store).write();
            System.out.println("sample store: " + store);
            MountOptions opts = new MountOptions(false, UnixIds.uid(), UnixIds.gid(), List.of(), 64L << 20, 250, false,
                    MountOptions.defaultThreads());
            session = MountSession.mount(new OllamaStore(store), mp, opts, StandardViews.all());
        } catch (IOException | RuntimeException e) {
            deleteTree(base);       // a demo that cannot mount leaves nothing behind either
            throw e;
        }
        try {
            System.out.println("mounted at:   " + mp);
            System.out.println();
            list(mp);
            System.out.println();
            System.out.println("try: python -c \"from safetensors import safe_open; print(safe_open('" + mp
                    + "/demo-st:int4/fp32/model.safetensors','np').keys())\"");
            System.out.println("     python -c \"from transformers import AutoTokenizer; print(AutoTokenizer.from_pretrained('" + mp
                    + "/demo-llama').tokenize('Hello world'))\"");
            if (!keep) {
                System.out.println("(`modelfs demo --keep` stays mounted so that you can)");
            }
            if (keep) {
                CountDownLatch stop = new CountDownLatch(1);
                Signal.handle(new Signal("INT"), s -> stop.countDown());
                Signal.handle(new Signal("TERM"), s -> stop.countDown());
                System.out.println("staying mounted; Ctrl-C or `modelfs unmount " + mp + "` to unmount");
                System.out.flush();
                session.warmUp();                       // behind the mount, as `modelfs mount` does

                while (!stop.await(1, TimeUnit.SECONDS)) {
                    if (!MountTable.isMounted(mp)) {
                        break;   // `modelfs unmount` (or fusermount -u)
                    }
                }
            }
        } finally {
            session.close();
            deleteTree(base);       // the sample store (and the default mount point): nothing is left behind
        }
        System.out.println("unmounted " + mp + "; removed the sample store");
        return 0;
    }

    static void deleteTree(Path root) throws IOException {
        if (MountTable.isMounted(root.resolve("mnt"))) {
            return;                 // never walk into a mount that is still there
        }
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    static void list(Path mp) throws IOException {
        List<Path> paths;
        try (Stream<Path> s = Files.walk(mp)) {
            paths = s.filter(p -> !p.equals(mp)).sorted().toList();
        }
        int width = 40;   // the name column: as wide as the longest indented file name
        for (Path p : paths) {
            Path rel = mp.relativize(p);
            width = Math.max(width, 2 * (rel.getNameCount() - 1) + rel.getFileName().toString().length());
        }
        for (Path p : paths) {
            Path rel = mp.relativize(p);
            String name = "  ".repeat(rel.getNameCount() - 1) + rel.getFileName();
            if (Files.isDirectory(p)) {
                System.out.println(name + "/");
            } else {
                System.out.printf("%-" + width + "s %12s%n", name, SizeConverter.human(Files.size(p)));
            }
        }
    }
}
