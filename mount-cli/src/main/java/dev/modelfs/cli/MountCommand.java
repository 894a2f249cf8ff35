package dev.modelfs.cli;

import dev.modelfs.cli.metrics.MountMetrics;
import dev.modelfs.fuse.MountOptions;
import dev.modelfs.fuse.MountSession;
import dev.modelfs.fuse.MountTable;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code modelfs mount}: serve the store at a mount point until unmounted, Ctrl-C or SIGTERM. */
@Command(name = "mount", mixinStandardHelpOptions = true,
        description = "Mount the store read-only at MOUNTPOINT (foreground unless --daemon).")
final class MountCommand implements Callable<Integer> {
    @Mixin
    StoreOption store;

    @Mixin
    ConversionOptions conversion;

    @Mixin
    MetricsOption metrics;

    @Parameters(paramLabel = "MOUNTPOINT", description = "existing empty directory")
    Path mountpoint;

    @Option(names = "-o", paramLabel = "OPT[,OPT...]", split = ",",
            description = "allow_other, uid=N, gid=N, or raw libfuse options")
    List<String> options = new ArrayList<>();

    @Option(names = "--daemon", description = "detach: mount in a background process and return once mounted")
    boolean daemon;

    @Option(names = "--cache-size", paramLabel = "SIZE", converter = SizeConverter.class, defaultValue = "512M",
            description = "converted-chunk cache size (default: ${DEFAULT-VALUE})")
    long cacheSize;

    @Option(names = "--log", paramLabel = "FILE", description = "with --daemon: log file (default: ~/.cache/modelfs/mount-<name>.log)")
    Path logFile;

    @Option(names = "--debug", description = "libfuse debug output")
    boolean debug;

    @Option(names = "--threads", paramLabel = "N", description = "FUSE worker threads (default: max(2, cores))")
    int threads = MountOptions.defaultThreads();

    @Option(names = "--no-kernel-passthrough",
            description = "serve whole-blob files (model.gguf) through modelfs too, not with the kernel's FUSE passthrough"
                    + " (Linux 6.9+, as root), which reads them straight from the blob")
    boolean noKernelPassthrough;

    @Option(names = "--io-uring",
            description = "take requests through io_uring when the kernel lets FUSE servers use it (Linux 6.14+ with"
                    + " fuse.enable_uring=1): about 1.5x the 4 KiB random reads, but sequential reads of reassembled"
                    + " files are 15-34%% slower")
    boolean ioUring;

    @Option(names = "--read-ahead-kb", paramLabel = "KIB",
            description = "set the kernel's read-ahead window on the mount to KIB, as root (default: ${DEFAULT-VALUE}, the"
                    + " kernel's 128): a larger one converts more of a file at once as it is read (e.g. 1024 for cold loads)")
    int readAheadKib = MountOptions.defaultReadAheadKib();

    @Option(names = "--refresh-ms", hidden = true, defaultValue = "250")
    long refreshMillis;

    @Option(names = "--grace", paramLabel = "SECONDS", defaultValue = "300",
            description = "on stop, keep serving files already open for up to this long (default: ${DEFAULT-VALUE})")
    long graceSeconds;

    /** The largest {@code --read-ahead-kb}: 64 MiB, far past where a larger window stops helping. */
    static final int MAX_READ_AHEAD_KIB = 65_536;

    @Override
    public Integer call() throws Exception {
        Path mp = mountpoint.toAbsolutePath().normalize();
        if (threads < 1) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--threads must be at least 1, not " + threads);
        }
        if (graceSeconds < 0) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--grace must not be negative, not " + graceSeconds);
        }
        if (readAheadKib < 0 || readAheadKib > MAX_READ_AHEAD_KIB) {
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "--read-ahead-kb must be between 0 and " + MAX_READ_AHEAD_KIB + ", not " + readAheadKib);
        }
        MountOptions opts = parseOptions();
        OllamaStore st = store.openExisting();         // like ls: no store there is an error, not an empty tree
        metrics.parse();                                    // a malformed --metrics is a usage error, daemon or not
        if (daemon) {
            return daemonize(mp, st);
        }
        return ServeLifecycle.serve(metrics, false,
                (telemetry, stopRequested) -> MountSession.mount(st, mp, opts, dev.modelfs.serve.StandardViews.all(), telemetry),
                new ServeLifecycle.Lines(
                        f -> "modelfs: serving " + st.root() + " at " + mp + " (Ctrl-C or `modelfs unmount " + mp + "` to stop; "
                                + dev.modelfs.quant.Kernels.describe(),
                        f -> "modelfs: " + mp + " was unmounted externally",
                        f -> "modelfs: unmounted " + mp + " (" + f.conversionSummary() + ")"),
                Duration.ofSeconds(graceSeconds));
    }

    private MountOptions parseOptions() {
        long uid = UnixIds.uid();
        long gid = UnixIds.gid();
        boolean allowOther = false;
        List<String> extra = new ArrayList<>();
        for (String o : options) {
            String t = o.trim();
            if (t.isEmpty()) {
                continue;
            }
            try {
                if (t.equals("allow_other")) {
                    allowOther = true;
                } else if (t.startsWith("uid=")) {
                    uid = Long.parseLong(t.substring(4));
                } else if (t.startsWith("gid=")) {
                    gid = Long.parseLong(t.substring(4));
                } else if (t.equals("ro") || t.equals("rw")) {
                    if (t.equals("rw")) {
                        throw new CommandLine.ParameterException(new CommandLine(this), "modelfs is read-only: -o rw is not supported");
                    }
                } else {
                    extra.add(t);
                }
            } catch (NumberFormatException e) {
                throw new CommandLine.ParameterException(new CommandLine(this), "bad option " + t);
            }
        }
        return new MountOptions(allowOther, uid, gid, extra, dev.modelfs.cache.MemoryCap.chunkCacheBytes(cacheSize, dev.modelfs.cache.MemoryCap.limit()), refreshMillis, debug, threads,
                conversion.cacheDirectory(), conversion.cacheDirSize, conversion.warmup(),
                !noKernelPassthrough, ioUring, conversion.convertAhead(), readAheadKib);
    }

    private int daemonize(Path mp, OllamaStore st) throws IOException, InterruptedException {
        MountSession.clearStale(mp);
        Path log = logFile != null ? logFile : Background.defaultLog("mount-" + mp.getFileName());
        List<String> cmd = DaemonArgs.common("mount", st, cacheSize, refreshMillis);
        cmd.add("--threads");
        cmd.add(Integer.toString(threads));
        if (noKernelPassthrough) {
            cmd.add("--no-kernel-passthrough");
        }
        if (ioUring) {
            cmd.add("--io-uring");
        }
        cmd.add("--read-ahead-kb");
        cmd.add(Integer.toString(readAheadKib));
        cmd.add("--grace");
        cmd.add(Long.toString(graceSeconds));
        cmd.addAll(DaemonArgs.options(conversion, metrics));
        if (!options.isEmpty()) {
            cmd.add("-o");
            cmd.add(String.join(",", options));
        }
        cmd.add(mp.toString());
        Process p = Background.start(cmd, log, () -> MountTable.isMounted(mp));
        String endpoint = MountMetrics.endpoint(mp).map(e -> ", metrics at http://" + e + "/metrics").orElse("");
        System.out.println("modelfs: mounted " + st.root() + " at " + mp + " (pid " + p.pid() + ", log " + log + endpoint + ")");
        return 0;
    }
}
