package dev.modelfs.warmup;

import dev.modelfs.cache.BlobLease;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.Node;
import dev.modelfs.tree.StoreTree;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayDeque;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.ToIntFunction;
import java.util.logging.Logger;

/**
 * Warms up the conversion kernels a served store actually uses, in the background at the lowest CPU
 * priority, so that the first read of a converted file on a fresh mount does not run them cold (a Vector
 * API loop runs about 100x slower until C2 has compiled it; BENCHMARKS.md, "First touch").
 *
 * <p>It builds the model directories of the store (what the first {@code ls} of each would do: headers
 * only), collects the distinct {@link ConvertedData#kernel() kernels} of their converted files, and for
 * each converts a few chunks of the largest data using it, from the real mapped blobs into a private native
 * buffer: the same code, with the same segment classes, that a read runs.
 *
 * <p>Invariants: one daemon thread at nice 19 ({@link ThreadNice}); at most {@link Budget#maxModels()}
 * model directories visited, {@link Budget#maxKernels()} kernels, {@link Budget#chunksPerKernel()} chunks
 * per kernel and about {@link Budget#cpu()} of this thread's CPU time in total; one 1 MiB native buffer;
 * it never writes into the chunk cache, a blob or anything a reader sees, so no served byte depends on
 * it (a front end's read-path warm-up, run after it on the same thread, reads like a client); every blob lease it takes is released before it moves to the next kernel; a failure (a broken
 * model, a truncated blob) skips that model or kernel with a fine-level log line; {@link #close()} stops
 * it at the next chunk.
 */
public final class KernelWarmup implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(KernelWarmup.class.getName());

    /**
     * Bounds of one warm-up.
     *
     * @param maxModels       model directories built and looked at
     * @param maxKernels      distinct kernels warmed
     * @param chunksPerKernel chunks converted per kernel
     * @param cpu             CPU time of the warm-up thread after which it stops
     */
    public record Budget(int maxModels, int maxKernels, int chunksPerKernel, Duration cpu) {
        /** The mount's default: enough chunks for C2 to compile a kernel's loops (BENCHMARKS.md), at most 10 s of CPU. */
        public static final Budget DEFAULT = new Budget(256, 64, 24, Duration.ofSeconds(10));

        public Budget {
            if (maxModels < 0 || maxKernels < 0 || chunksPerKernel < 0 || cpu.isNegative()) {
                throw new IllegalArgumentException("negative warm-up budget");
            }
        }
    }

    /**
     * What a warm-up did.
     *
     * @param kernels  the kernels warmed, in the order they were found
     * @param chunks   chunks converted in total
     * @param cpuNanos CPU time of the warm-up thread
     * @param models   model directories looked at
     * @param nice     the warm-up thread's nice value as Linux reported it (19; -100 when unknown)
     * @param files    files read by the front end's read-path warm-up after the kernels (0 without one)
     */
    public record Report(List<String> kernels, int chunks, long cpuNanos, int models, int nice, int files) {
        public Report {
            kernels = List.copyOf(kernels);
        }

        /** One line for the log. */
        public String describe() {
            return String.format("warm-up: %d kernels of %d models, %d chunks, %d files read through the front end, %.2f s CPU",
                    kernels.size(), models, chunks, files, cpuNanos / 1e9);
        }
    }

    private final StoreTree tree;
    private final BlobResolver resolver;
    private final Budget budget;
    private final ToIntFunction<BooleanSupplier> then;
    private final CompletableFuture<Report> done = new CompletableFuture<>();
    private volatile boolean stopped;

    private KernelWarmup(StoreTree tree, BlobResolver resolver, Budget budget, ToIntFunction<BooleanSupplier> then) {
        this.tree = tree;
        this.resolver = resolver;
        this.budget = budget;
        this.then = then;
    }

    /** Starts warming the kernels of {@code tree}'s models on a background thread. */
    public static KernelWarmup start(StoreTree tree, BlobResolver resolver, Budget budget) {
        return start(tree, resolver, budget, stop -> 0);
    }

    /**
     * Like {@link #start(StoreTree, BlobResolver, Budget)}, then runs {@code then} on the same thread (a front
     * end's read-path warm-up; it is given "stop now" and returns how many files it read).
     */
    public static KernelWarmup start(StoreTree tree, BlobResolver resolver, Budget budget, ToIntFunction<BooleanSupplier> then) {
        KernelWarmup w = new KernelWarmup(tree, resolver, budget, then);
        Thread t = new Thread(w::run, "modelfs-warmup");
        t.setDaemon(true);
        t.start();
        return w;
    }

    /** The report, once the warm-up has finished (or was stopped). */
    public Report await(Duration timeout) throws InterruptedException, TimeoutException {
        try {
            return done.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("warm-up failed", e.getCause());
        }
    }

    /** Stops the warm-up at the next chunk (idempotent). */
    @Override
    public void close() {
        stopped = true;
    }

    private void run() {
        ThreadNice.lowest();
        int nice = ThreadNice.current();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long cpu0 = mx.getCurrentThreadCpuTime();
        int chunks = 0;
        List<String> warmed = new ArrayList<>();
        int models = 0;
        int files = 0;
        try {
            Map<String, ConvertedData> kernels = new LinkedHashMap<>();
            models = collect(kernels);
            long cpuLimit = budget.cpu().toNanos();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment scratch = null;
                for (Map.Entry<String, ConvertedData> k : kernels.entrySet()) {
                    if (stopped || mx.getCurrentThreadCpuTime() - cpu0 >= cpuLimit) {
                        break;
                    }
                    ConvertedData data = k.getValue();
                    if (scratch == null || scratch.byteSize() < data.chunkBytes()) {
                        scratch = arena.allocate(Math.max(data.chunkBytes(), 1 << 20), 64);
                    }
                    int n = warm(data, scratch, mx, cpu0 + cpuLimit);
                    if (n > 0) {
                        warmed.add(k.getKey());
                        chunks += n;
                    }
                }
            }
            if (!stopped) {
                files = then.applyAsInt(() -> stopped);
            }
        } catch (RuntimeException | Error e) {
            LOG.fine("warm-up stopped: " + e);
        } finally {
            Report r = new Report(warmed, chunks, mx.getCurrentThreadCpuTime() - cpu0, models, nice, files);
            LOG.info(r.describe());
            done.complete(r);
        }
    }

    /** Fills {@code kernels} with the largest data of each kernel in the first models; returns how many models it looked at. */
    private int collect(Map<String, ConvertedData> kernels) {
        return forEachFile(tree, budget.maxModels(), () -> stopped, (p, f) -> f.source().convertedData().forEach(d -> keep(kernels, d)));
    }

    /**
     * Calls {@code visit} with every file of the first {@code maxModels} models and its path below the root of the
     * tree (building the model directories), until {@code stop} says so; returns how many models it looked at. A
     * model whose directory fails to build is skipped with a fine-level log line.
     */
    private static int forEachFile(StoreTree tree, int maxModels, BooleanSupplier stop, BiConsumer<Path, FileNode> visit) {
        int models = 0;
        for (StoreTree.ModelEntry m : tree.models().values()) {
            if (stop.getAsBoolean() || models >= maxModels) {
                break;
            }
            models++;
            Deque<Map.Entry<Path, DirNode>> dirs = new ArrayDeque<>();
            dirs.push(Map.entry(Path.of(m.manifest().name().directoryPath()), m.dir()));
            try {
                while (!dirs.isEmpty()) {
                    Map.Entry<Path, DirNode> d = dirs.pop();
                    for (Map.Entry<String, Node> c : d.getValue().children().entrySet()) {
                        Path p = d.getKey().resolve(c.getKey());
                        switch (c.getValue()) {
                            case DirNode sub -> dirs.push(Map.entry(p, sub));
                            case FileNode f -> visit.accept(p, f);
                        }
                    }
                }
            } catch (RuntimeException e) {
                LOG.fine("warm-up skips " + m.manifest().name() + ": " + e);
            }
        }
        return models;
    }

    private void keep(Map<String, ConvertedData> kernels, ConvertedData d) {
        String k = d.kernel();
        if (k == null) {
            return;                     // no conversion kernel (a rebuilt JSON file): nothing to warm
        }
        ConvertedData old = kernels.get(k);
        if (old == null ? kernels.size() < budget.maxKernels() : d.length() > old.length()) {
            kernels.put(k, d);
        }
    }

    /** Converts up to the budget's chunks of {@code data} into {@code scratch}; returns how many. */
    private int warm(ConvertedData data, MemorySegment scratch, ThreadMXBean mx, long cpuUntil) {
        List<BlobRef> refs = data.blobs();
        List<BlobLease> leases = new ArrayList<>(refs.size());
        try {
            List<MemorySegment> segs = new ArrayList<>(refs.size());
            for (BlobRef r : refs) {
                BlobLease l = resolver.acquire(r);
                leases.add(l);
                segs.add(l.segment());
            }
            long chunkCount = (data.length() + data.chunkBytes() - 1) / data.chunkBytes();
            if (chunkCount == 0) {
                return 0;
            }
            int n = 0;
            while (n < budget.chunksPerKernel() && !stopped && mx.getCurrentThreadCpuTime() < cpuUntil) {
                long chunk = n % Math.min(chunkCount, 4);          // a few distinct chunks, their source pages stay cached
                data.compute(chunk, segs, scratch.asSlice(0, data.chunkLength(chunk)));
                n++;
            }
            return n;
        } catch (IOException | RuntimeException | InternalError e) {
            LOG.fine("warm-up skips " + data.kernel() + " (" + data.describe() + "): " + e);
            return 0;
        } finally {
            leases.forEach(BlobLease::close);
        }
    }

    /**
     * The files a front end's read-path warm-up reads: for each conversion kernel the largest file that runs it,
     * and the largest file without conversions, in the first {@code maxModels} models; at most {@code maxFiles},
     * as paths below the root of the tree.
     */
    public static Collection<Path> filesToRead(StoreTree tree, int maxModels, int maxFiles) {
        Map<String, Path> best = new LinkedHashMap<>();
        Map<String, Long> sizes = new LinkedHashMap<>();
        forEachFile(tree, maxModels, () -> false, (p, f) -> {
            List<String> kernels = f.source().convertedData().stream().map(ConvertedData::kernel).filter(k -> k != null).distinct().toList();
            for (String k : kernels.isEmpty() ? List.of("") : kernels) {
                if ((best.containsKey(k) || best.size() < maxFiles) && f.size() > sizes.getOrDefault(k, -1L)) {
                    best.put(k, p);
                    sizes.put(k, f.size());
                }
            }
        });
        return new LinkedHashSet<>(best.values());
    }
}
