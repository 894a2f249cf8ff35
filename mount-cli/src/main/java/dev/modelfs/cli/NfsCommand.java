package dev.modelfs.cli;

import dev.modelfs.cli.metrics.PrometheusTelemetry;
import dev.modelfs.nfs.AllowList;
import dev.modelfs.nfs.LoopbackWarmup;
import dev.modelfs.nfs.NfsServer;
import dev.modelfs.serve.ServedTree;
import dev.modelfs.serve.StandardViews;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.telemetry.GatedTelemetry;
import dev.modelfs.warmup.JitQueue;
import dev.modelfs.warmup.KernelWarmup;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.BooleanSupplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import sun.misc.Signal;

/** {@code modelfs nfs}: serve the store read-only over NFSv3 until Ctrl-C or SIGTERM. */
@Command(name = "nfs", mixinStandardHelpOptions = true,
        description = {"Serve the store read-only over NFSv3 (NFS and MOUNT on one TCP port, export /), no FUSE needed.",
                "Client: mount -t nfs -o ro,vers=3,proto=tcp,port=PORT,mountport=PORT,mountproto=tcp,nolock HOST:/ DIR"})
final class NfsCommand implements Callable<Integer> {
    @Mixin
    StoreOption store;

    @Mixin
    ConversionOptions conversion;

    @Mixin
    MetricsOption metrics;

    @Option(names = "--bind", paramLabel = "ADDR", defaultValue = "127.0.0.1",
            description = "address to listen on (default: ${DEFAULT-VALUE}; 0.0.0.0 for every interface)")
    String bind;

    @Option(names = "--port", paramLabel = "N", description = "TCP port of NFS and MOUNT (default: 2049 as root, else 20490; 0 = any free)")
    Integer port;

    @Option(names = "--allow", paramLabel = "CIDR[,CIDR...]", split = ",",
            description = "client networks allowed (default: every client that can reach --bind)")
    List<String> allow = new ArrayList<>();

    @Option(names = "--daemon", description = "detach: serve from a background process and return once serving")
    boolean daemon;

    @Option(names = "--log", paramLabel = "FILE", description = "with --daemon: log file (default: ~/.cache/modelfs/nfs-PORT.log)")
    Path logFile;

    @Option(names = "--cache-size", paramLabel = "SIZE", converter = SizeConverter.class, defaultValue = "512M",
            description = "converted-chunk cache size (default: ${DEFAULT-VALUE})")
    long cacheSize;

    @Option(names = "--refresh-ms", hidden = true, defaultValue = "250")
    long refreshMillis;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        AllowList allowList;
        try {
            allowList = AllowList.parse(allow);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--allow: " + e.getMessage());
        }
        if (port != null && (port < 0 || port > 65535)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--port must be 0 to 65535, not " + port);
        }
        int p = port != null ? port : UnixIds.uid() == 0 ? 2049 : 20490;
        OllamaStore st = store.openExisting();
        metrics.parse();
        if (daemon) {
            return daemonize(st, p);
        }
        CountDownLatch stop = new CountDownLatch(1);
        Signal.handle(new Signal("INT"), s -> stop.countDown());
        Signal.handle(new Signal("TERM"), s -> stop.countDown());
        Signal.handle(new Signal("HUP"), s -> { });
        PrometheusTelemetry telemetry = metrics.start(true);
        GatedTelemetry gate = GatedTelemetry.closed(MetricsOption.orNone(telemetry));      // open once the warm-up is done
        ServedTree served = ServedTree.open(st, StandardViews.all(), cacheSize, refreshMillis, gate, conversion.openDisk(cacheSize));
        KernelWarmup.Budget budget = KernelWarmup.Budget.DEFAULT;
        if (!conversion.noWarmup) {
            KernelWarmup.beforeServing(served.tree(), served.resolver(), budget.withJitWait(Duration.ZERO), () -> stop.getCount() == 0);
            KernelWarmup.prefault(served.chunks());
        }
        NfsServer server;
        try {
            server = NfsServer.start(served, new NfsServer.Config(bind, p, allowList, (int) UnixIds.uid(), (int) UnixIds.gid()));
        } catch (IOException | RuntimeException e) {
            served.close();
            if (telemetry != null) {
                telemetry.close();
            }
            throw e;
        }
        if (!conversion.noWarmup) {
            warmReads(server, served, budget, () -> stop.getCount() == 0);
        }
        gate.open();
        if (telemetry != null) {
            telemetry.watch(served, server::openFiles);
        }
        int actual = server.address().getPort();
        System.out.println("modelfs: serving NFS " + st.root() + " on " + bind + ":" + actual
                + (allowList.allowsEveryone() ? "" : " to " + String.join(",", allowList.texts()))
                + " (export /; mount -t nfs -o vers=3,proto=tcp,port=" + actual + ",mountport=" + actual + ",mountproto=tcp,nolock "
                + bind + ":/ DIR" + MetricsOption.describe(telemetry) + ")");
        System.out.flush();
        stop.await();
        server.close();
        if (telemetry != null) {
            telemetry.close();
        }
        System.out.println("modelfs: NFS server stopped (" + server.conversionSummary() + ")");
        return 0;
    }

    /**
     * The NFS half of the warm-up ({@link LoopbackWarmup}) in passes until the JIT has nothing left to compile for it
     * ({@link JitQueue#settle}).
     */
    private static void warmReads(NfsServer server, ServedTree served, KernelWarmup.Budget budget, BooleanSupplier stop) {
        long t0 = System.nanoTime();
        List<String> files = KernelWarmup.plainFilesToRead(served.tree(), budget.maxModels()).stream().map(Path::toString).toList();
        int[] read = {0};
        try {
            JitQueue.settle(() -> read[0] = LoopbackWarmup.run(server.address(), files, (int) UnixIds.uid(), (int) UnixIds.gid(), stop),
                    LoopbackWarmup.PASSES, budget.jitWait());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        KernelWarmup.frontEndDone("NFS", read[0], t0, budget);
    }

    private int daemonize(OllamaStore st, int p) throws IOException, InterruptedException {
        Path log = logFile != null ? logFile : Background.defaultLog("nfs-" + p);
        long before = Files.exists(log) ? Files.size(log) : 0;
        List<String> cmd = new ArrayList<>(List.of("nfs", "--store", st.root().toString(), "--bind", bind,
                "--port", Integer.toString(p), "--cache-size", Long.toString(cacheSize), "--refresh-ms", Long.toString(refreshMillis)));
        cmd.addAll(conversion.args());
        cmd.addAll(metrics.args());
        if (!allow.isEmpty()) {
            cmd.add("--allow");
            cmd.add(String.join(",", allow));
        }
        Process proc = Background.start(cmd, log, () -> logSince(log, before).contains("modelfs: serving NFS"));
        String line = logSince(log, before).lines().filter(l -> l.contains("modelfs: serving NFS")).findFirst().orElse("");
        System.out.println(line + " (pid " + proc.pid() + ", log " + log + ")");
        return 0;
    }

    private static String logSince(Path log, long offset) {
        try (var ch = java.nio.channels.FileChannel.open(log)) {
            ch.position(offset);
            return new String(java.nio.channels.Channels.newInputStream(ch).readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
