package dev.modelfs.cli;

import dev.modelfs.nfs.AllowList;
import dev.modelfs.nfs.NfsServer;
import dev.modelfs.nfs.NfsSession;
import dev.modelfs.serve.StandardViews;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

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
        long cache = dev.modelfs.cache.MemoryCap.chunkCacheBytes(cacheSize, dev.modelfs.cache.MemoryCap.limit());
        NfsSession.Options opts = new NfsSession.Options(new NfsServer.Config(bind, p, allowList, (int) UnixIds.uid(), (int) UnixIds.gid()),
                cache, refreshMillis, conversion.openDisk(cache), conversion.warmup(), conversion.convertAhead());
        return ServeLifecycle.serve(metrics, true,
                (telemetry, stopRequested) -> NfsSession.start(st, opts, StandardViews.all(), telemetry, stopRequested),
                new ServeLifecycle.Lines(f -> servingLine(st, (NfsSession) f, allowList),
                        f -> "modelfs: NFS server stopped serving",
                        f -> "modelfs: NFS server stopped (" + f.conversionSummary() + ")"),
                Duration.ZERO);
    }

    private String servingLine(OllamaStore st, NfsSession session, AllowList allowList) {
        int actual = session.address().getPort();
        return "modelfs: serving NFS " + st.root() + " on " + bind + ":" + actual
                + (allowList.allowsEveryone() ? "" : " to " + String.join(",", allowList.texts()))
                + " (export /; mount -t nfs -o vers=3,proto=tcp,port=" + actual + ",mountport=" + actual + ",mountproto=tcp,nolock "
                + bind + ":/ DIR";
    }

    private int daemonize(OllamaStore st, int p) throws IOException, InterruptedException {
        Path log = logFile != null ? logFile : Background.defaultLog("nfs-" + p);
        long before = Files.exists(log) ? Files.size(log) : 0;
        List<String> cmd = DaemonArgs.common("nfs", st, cacheSize, refreshMillis);
        cmd.addAll(List.of("--bind", bind, "--port", Integer.toString(p)));
        cmd.addAll(DaemonArgs.options(conversion, metrics));
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
