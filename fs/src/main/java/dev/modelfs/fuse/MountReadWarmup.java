package dev.modelfs.fuse;

import com.sun.nio.file.ExtendedOpenOption;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.Node;
import dev.modelfs.tree.StoreTree;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;

/**
 * The second half of a fresh mount's warm-up (after {@code KernelWarmup}'s kernels): reads the start of a
 * few files through the mount itself, in many small requests, so that the FUSE read path (the
 * {@code read_buf} upcall, {@code OpenedSource}, the chunk cache, read-ahead) has run often enough to be
 * compiled before a user's first read. The files: for each conversion kernel the largest file that runs it,
 * and the largest file without conversions, in the first {@code maxModels} models.
 *
 * <p>Invariants: reads only, with {@code O_DIRECT} (4 KiB requests cycling over the first
 * {@value #REGION} bytes, {@code requestsPerFile} of them), so the kernel caches no page of the mount (a
 * user's first read still asks modelfs); converted chunks it reads (the first chunk, and the chunks
 * read-ahead converts after it: 1 + 2 x cores MiB per converted file) enter the chunk cache as any
 * reader's do (the same bytes); at most {@code maxFiles} files; it stops at the next request once
 * {@code stop} says so; a failure ends it with a fine-level log line.
 */
final class MountReadWarmup {
    private static final Logger LOG = Logger.getLogger(MountReadWarmup.class.getName());
    private static final int REQUEST = 4 << 10;
    private static final long REGION = 1 << 20;

    private MountReadWarmup() {}

    /** Reads the chosen files; returns how many it read. */
    static int run(Path mountpoint, StoreTree tree, int maxModels, int maxFiles, int requestsPerFile, BooleanSupplier stop) {
        Map<String, Path> files = choose(tree, maxModels, maxFiles);
        ByteBuffer buf = ByteBuffer.allocateDirect(REQUEST + 4096).alignedSlice(4096).limit(REQUEST);
        int read = 0;
        for (Path rel : new java.util.LinkedHashSet<>(files.values())) {
            if (stop.getAsBoolean()) {
                break;
            }
            try (FileChannel ch = FileChannel.open(mountpoint.resolve(rel), StandardOpenOption.READ, ExtendedOpenOption.DIRECT)) {
                long region = Math.max(REQUEST, Math.min(REGION, ch.size()) / REQUEST * REQUEST);
                for (int i = 0; i < requestsPerFile && !stop.getAsBoolean(); i++) {
                    buf.clear();
                    if (ch.read(buf, (long) i * REQUEST % region) <= 0) {
                        break;
                    }
                }
                read++;
            } catch (IOException | RuntimeException e) {
                LOG.fine("read warm-up stops at " + rel + ": " + e);
                break;
            }
        }
        return read;
    }

    /** Kernel (or "" for no conversion) to the largest file using it, as paths below the mount point. */
    private static Map<String, Path> choose(StoreTree tree, int maxModels, int maxFiles) {
        Map<String, Path> best = new LinkedHashMap<>();
        Map<String, Long> sizes = new LinkedHashMap<>();
        int models = 0;
        for (StoreTree.ModelEntry m : tree.models().values()) {
            if (models++ >= maxModels) {
                break;
            }
            Deque<Map.Entry<Path, DirNode>> dirs = new ArrayDeque<>();
            dirs.push(Map.entry(Path.of(m.manifest().name().directoryPath()), m.dir()));
            try {
                while (!dirs.isEmpty()) {
                    Map.Entry<Path, DirNode> d = dirs.pop();
                    for (Map.Entry<String, Node> c : d.getValue().children().entrySet()) {
                        Path p = d.getKey().resolve(c.getKey());
                        switch (c.getValue()) {
                            case DirNode sub -> dirs.push(Map.entry(p, sub));
                            case FileNode f -> {
                                var kernels = f.source().convertedData().stream().map(x -> x.kernel()).filter(k -> k != null).distinct().toList();
                                for (String k : kernels.isEmpty() ? java.util.List.of("") : kernels) {
                                    if ((best.containsKey(k) || best.size() < maxFiles) && f.size() > sizes.getOrDefault(k, -1L)) {
                                        best.put(k, p);
                                        sizes.put(k, f.size());
                                    }
                                }
                            }
                        }
                    }
                }
            } catch (RuntimeException e) {
                LOG.fine("read warm-up skips " + m.manifest().name() + ": " + e);
            }
        }
        return best;
    }
}
