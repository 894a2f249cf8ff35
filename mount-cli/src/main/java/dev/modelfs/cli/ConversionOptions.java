package dev.modelfs.cli;

import dev.modelfs.cache.DiskChunkStore;
import java.io.IOException;
import java.nio.file.Path;
import dev.modelfs.warmup.WarmupDeadline;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The options of {@code mount} and {@code nfs} about converted bytes: the cache directory (on by default: converted
 * once, then served whole by kernel passthrough, docs/DESIGN.md §2.7) and the kernel warm-up.
 */
final class ConversionOptions {
    @Option(names = "--cache-dir", paramLabel = "DIR",
            description = "keep converted chunks, and converted files once whole, on disk in DIR: reused after a restart and by"
                    + " other modelfs processes (default: $MODELFS_CACHE_DIR, else ${XDG_CACHE_HOME:-~/.cache}/modelfs/converted)")
    Path cacheDir;

    @Option(names = "--no-cache-dir", description = "keep converted chunks in memory only: every mount converts again")
    boolean noCacheDir;

    @Option(names = "--cache-dir-size", paramLabel = "SIZE", converter = SizeConverter.class, defaultValue = "10G",
            description = "bound of the cache directory (default: ${DEFAULT-VALUE})")
    long cacheDirSize;

    @Option(names = "--no-convert-ahead",
            description = "with a cache directory, do not convert models' most loaded files (model.gguf, bf16/, a GGUF's"
                    + " model.safetensors) into it ahead of readers, newest models first, at the lowest CPU priority")
    boolean noConvertAhead;

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

    /** The command this mixin is part of (null when parsed alone, in tests): usage errors are reported against it. */
    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    /** The environment the default cache directory is named from (tests set their own). */
    Map<String, String> environment = System.getenv();

    /** The cache directory once resolved ({@link #cacheDirectory()}); {@link #NONE} for memory only. */
    private Path resolved;
    private static final Path NONE = Path.of("");

    /**
     * The cache directory this command uses, absolute: {@code --cache-dir}; null with {@code --no-cache-dir}; else the
     * default ({@link DefaultCacheDir}), or null when it cannot be made or written (one log line: the command serves from
     * memory then, as a cache directory whose disk fails does). Resolved once.
     */
    Path cacheDirectory() {
        if (resolved == null) {
            if (noCacheDir && cacheDir != null) {
                String contradiction = "--cache-dir and --no-cache-dir contradict each other";
                throw mixee == null ? new IllegalArgumentException(contradiction)
                        : new CommandLine.ParameterException(mixee.commandLine(), contradiction);   // a usage error
            }
            Path dir = noCacheDir ? null : cacheDir != null ? cacheDir.toAbsolutePath() : DefaultCacheDir.usable(environment, cacheDirSize);
            resolved = dir == null ? NONE : dir;
        }
        return resolved == NONE ? null : resolved;
    }

    /** Whether to convert ahead of readers: a cache directory and no {@code --no-convert-ahead}. */
    boolean convertAhead() {
        return !noConvertAhead && cacheDirectory() != null;
    }

    /** The disk tier under a memory cache of {@code cacheBytes}, or null without a cache directory. */
    DiskChunkStore openDisk(long cacheBytes) throws IOException {
        Path dir = cacheDirectory();
        return dir == null ? null : new DiskChunkStore(dir, cacheDirSize, DiskChunkStore.queueFor(cacheBytes));
    }

    /** The same options as arguments, for the process {@code --daemon} starts. */
    List<String> args() {
        List<String> a = new ArrayList<>();
        Path dir = cacheDirectory();
        if (dir != null) {
            a.addAll(List.of("--cache-dir", dir.toString(), "--cache-dir-size", Long.toString(cacheDirSize)));
        } else {
            a.add("--no-cache-dir");
        }
        if (noWarmup) {
            a.add("--no-warmup");
        }
        if (noConvertAhead) {
            a.add("--no-convert-ahead");
        }
        if (warmupSeconds != WarmupDeadline.DEFAULT_WALL.toSeconds()) {
            a.addAll(List.of("--warmup-seconds", Integer.toString(warmupSeconds)));
        }
        return a;
    }
}
