package dev.modelfs.cli;

import dev.modelfs.cache.DiskChunkStore;
import java.io.IOException;
import java.nio.file.Path;
import dev.modelfs.warmup.WarmupDeadline;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** The options of {@code mount} and {@code nfs} about converted bytes: the on-disk chunk cache and the kernel warm-up. */
final class ConversionOptions {
    @Option(names = "--cache-dir", paramLabel = "DIR",
            description = "also keep converted chunks on disk in DIR (reused after a restart and by other modelfs processes)")
    Path cacheDir;

    @Option(names = "--cache-dir-size", paramLabel = "SIZE", converter = SizeConverter.class, defaultValue = "10G",
            description = "bound of --cache-dir (default: ${DEFAULT-VALUE})")
    long cacheDirSize;

    @Option(names = "--no-warmup", description = "skip the warm-up of the store's conversion kernels and read path that runs behind the served tree (converted files then open at once, and their first reads run JIT-cold)")
    boolean noWarmup;

    @Option(names = "--warmup-seconds", paramLabel = "S", defaultValue = "8",
            description = "end the warm-up, and the wait of converted files' opens for it, at most S seconds after it began, warm or not"
                    + " (default: ${DEFAULT-VALUE}); the tree is served before it either way")
    int warmupSeconds;

    /** The warm-up's wall-clock bound ({@code WarmupDeadline}); zero with {@code --no-warmup}. */
    Duration warmup() {
        if (warmupSeconds < 1 && !noWarmup) {
            throw new IllegalArgumentException("--warmup-seconds must be at least 1 (--no-warmup skips the warm-up), not " + warmupSeconds);
        }
        return noWarmup ? Duration.ZERO : Duration.ofSeconds(warmupSeconds);
    }

    /** The disk tier under a memory cache of {@code cacheBytes}, or null without {@code --cache-dir}. */
    DiskChunkStore openDisk(long cacheBytes) throws IOException {
        return cacheDir == null ? null
                : new DiskChunkStore(cacheDir.toAbsolutePath(), cacheDirSize, DiskChunkStore.queueFor(cacheBytes));
    }

    /** The same options as arguments, for the process {@code --daemon} starts. */
    List<String> args() {
        List<String> a = new ArrayList<>();
        if (cacheDir != null) {
            a.addAll(List.of("--cache-dir", cacheDir.toAbsolutePath().toString(), "--cache-dir-size", Long.toString(cacheDirSize)));
        }
        if (noWarmup) {
            a.add("--no-warmup");
        }
        if (warmupSeconds != WarmupDeadline.DEFAULT_WALL.toSeconds()) {
            a.addAll(List.of("--warmup-seconds", Integer.toString(warmupSeconds)));
        }
        return a;
    }
}
