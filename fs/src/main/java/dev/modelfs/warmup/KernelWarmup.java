package dev.modelfs.warmup;

import dev.modelfs.cache.BlobLease;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.bytes.Segment;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.Node;
import dev.modelfs.tree.StoreTree;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * Warms up what the first read of a served store runs, before the store is served, so that a user's first read
 * of a converted file on a fresh mount does not run cold (a Vector API loop runs about 100x slower until C2 has
 * compiled it; BENCHMARKS.md, "First touch").
 *
 * <p>{@link #beforeServing} builds the model directories of the store (what the first {@code ls} of each would
 * do: headers only), collects the distinct {@link ConvertedData#kernel() kernels} of their converted files, and
 * for each converts a few chunks of the largest data using it, from the real mapped blobs into a private native
 * buffer (the same code, with the same segment classes, that a read runs); then reads each kernel's largest data
 * with the read path ({@link ReadPathWarmup}, {@link #regionsToRead}), in passes on fresh threads until a pass
 * leaves the JIT compilers nothing to compile ({@link JitQueue#settle}). The front ends run it behind a tree they
 * already serve ({@link BackgroundWarmup}), opens of converted files waiting for its end (the served tree's
 * {@code serve.ConversionGate}), so that start-up does not wait for it (docs/DESIGN.md §2.8). {@link #prefault} is
 * the memory half: it faults in the served chunk cache's first buffers.
 *
 * <p>Invariants: runs on the caller's thread, the read passes' threads and their read-ahead pools; at most
 * {@link Budget#maxModels()} model directories visited, {@link Budget#maxKernels()} kernels,
 * {@link Budget#chunksPerKernel()} chunks per kernel, about {@link Budget#cpu()} of the caller's CPU time for
 * the kernels, {@link Budget#readBytesPerFile()} of each of at most {@link Budget#readFiles()} files read per
 * pass, {@link ReadPathWarmup#PASSES} passes within {@link ReadPathWarmup#PASSES_WALL}; one 1 MiB native buffer
 * and a private chunk cache; it never writes into the served chunk cache, a blob or anything a reader sees, so no
 * served byte depends on it,
 * and it counts in no metric; every blob lease it takes is released before it moves on; a failure (a broken
 * model, a truncated blob) skips that model, kernel or file with a fine-level log line.
 */
public final class KernelWarmup {
    private static final Logger LOG = Logger.getLogger(KernelWarmup.class.getName());

    /**
     * Bounds of one warm-up.
     *
     * @param maxModels        model directories built and looked at
     * @param maxKernels       distinct kernels warmed
     * @param chunksPerKernel  chunks converted per kernel
     * @param cpu              CPU time of the warming thread after which the kernels' part stops
     * @param readFiles        parts of files (one per kernel, and the largest plain file) read by the read path's
     *                         part ({@link #regionsToRead})
     * @param readBytesPerFile bytes read of each, from where it starts
     * @param jitWait          longest wait for the JIT compilers to go idle at the end
     */
    public record Budget(int maxModels, int maxKernels, int chunksPerKernel, Duration cpu, int readFiles,
                         long readBytesPerFile, Duration jitWait) {
        /**
         * The front ends' default: enough chunks and reads for C2 to compile a kernel's loops and the read path
         * (BENCHMARKS.md), at most 10 s of CPU for the kernels, 32 MiB of each of 8 files, 5 s of waiting.
         */
        public static final Budget DEFAULT = new Budget(256, 64, 24, Duration.ofSeconds(10), 8, 32L << 20, Duration.ofSeconds(5));

        public Budget {
            if (maxModels < 0 || maxKernels < 0 || chunksPerKernel < 0 || cpu.isNegative() || readFiles < 0
                    || readBytesPerFile < 0 || jitWait.isNegative()) {
                throw new IllegalArgumentException("negative warm-up budget");
            }
        }

        /** The same with another CPU bound for the kernels' part. */
        public Budget withCpu(Duration cpu) {
            return new Budget(maxModels, maxKernels, chunksPerKernel, cpu, readFiles, readBytesPerFile, jitWait);
        }

        /** The same with another bound on the wait for the compilers. */
        public Budget withJitWait(Duration wait) {
            return new Budget(maxModels, maxKernels, chunksPerKernel, cpu, readFiles, readBytesPerFile, wait);
        }

        /** The kernels' part only: no file read, no wait. */
        public Budget kernelsOnly() {
            return new Budget(maxModels, maxKernels, chunksPerKernel, cpu, 0, 0, Duration.ZERO);
        }
    }

    /**
     * What a warm-up did.
     *
     * @param kernels   the kernels warmed, in the order they were found
     * @param chunks    chunks converted by the kernels' part
     * @param cpuNanos  CPU time of the warming thread
     * @param models    model directories looked at
     * @param files     parts of files read by the read path's part (the log's "files read")
     * @param wallNanos how long it took, waiting for the compilers included
     * @param jitIdle   false when a wait for the JIT compilers was asked and ran out before they were idle
     */
    public record Report(List<String> kernels, int chunks, long cpuNanos, int models, int files, long wallNanos, boolean jitIdle) {
        public Report {
            kernels = List.copyOf(kernels);
        }

        /** One line for the log. */
        public String describe() {
            return String.format("warm-up: %d kernels of %d models, %d chunks, %d files read, %.2f s CPU, done in %.2f s%s",
                    kernels.size(), models, chunks, files, cpuNanos / 1e9, wallNanos / 1e9, jitIdle ? "" : " (compilers still busy)");
        }
    }

    private final StoreTree tree;
    private final BlobResolver resolver;
    private final Budget budget;
    private final BooleanSupplier stop;
    private final WarmupDeadline deadline;
    /** The kernels' part stops here: {@link #stop}, or its share of the deadline ({@link WarmupDeadline#KERNELS}). */
    private final BooleanSupplier kernelsStop;
    /** The read path's part stops here: {@link #stop}, or its share of the deadline ({@link WarmupDeadline#READ_PATH}). */
    private final WarmupDeadline readsEnd;

    private KernelWarmup(StoreTree tree, BlobResolver resolver, Budget budget, BooleanSupplier stop, WarmupDeadline deadline) {
        this.deadline = deadline;
        WarmupDeadline kernelsEnd = deadline.phase(WarmupDeadline.KERNELS);
        this.kernelsStop = () -> stop.getAsBoolean() || kernelsEnd.passed();
        this.readsEnd = deadline.phase(WarmupDeadline.READ_PATH);
        this.tree = tree;
        this.resolver = resolver;
        this.budget = budget;
        this.stop = stop;
    }

    /** How much of the served chunk cache's buffers {@link #prefault} faults in (at most the cache's size): 128 MiB. */
    public static final long PREFAULT_BYTES = 128L << 20;

    /**
     * Faults in the first {@link #PREFAULT_BYTES} of {@code cache}'s buffers ({@link ChunkCache#prefault}), so that a
     * first read's conversions do not pay a page fault per 4 KiB (about 40 ms per 128 MiB here, BENCHMARKS.md); logs
     * and returns the bytes. They stay resident, within the cache's size.
     */
    public static long prefault(ChunkCache cache) {
        long t0 = System.nanoTime();
        long bytes = cache.prefault(PREFAULT_BYTES);
        LOG.info(String.format("warm-up: %d MiB of chunk buffers faulted in, %.2f s", bytes >> 20, (System.nanoTime() - t0) / 1e9));
        return bytes;
    }

    /** {@link #beforeServing(StoreTree, BlobResolver, Budget, BooleanSupplier)} until done. */
    public static Report beforeServing(StoreTree tree, BlobResolver resolver, Budget budget) {
        return beforeServing(tree, resolver, budget, () -> false);
    }

    /**
     * Warms up {@code tree}'s kernels and read path on the calling thread within {@code budget}, stopping early
     * once {@code stop} says so (checked between chunks and reads, and while waiting for the compilers); logs and
     * returns what it did. An interrupt ends the wait for the compilers (the thread's interrupt status is kept).
     */
    public static Report beforeServing(StoreTree tree, BlobResolver resolver, Budget budget, BooleanSupplier stop) {
        return beforeServing(tree, resolver, budget, stop, WarmupDeadline.none());
    }

    /**
     * The same, ending by {@code deadline} whatever its budget would still allow (a front end's warm-up on a busy
     * machine: {@link WarmupDeadline}).
     */
    public static Report beforeServing(StoreTree tree, BlobResolver resolver, Budget budget, BooleanSupplier stop,
                                       WarmupDeadline deadline) {
        Report r = new KernelWarmup(tree, resolver, budget, deadline.or(stop), deadline).run();
        LOG.info(r.describe());
        return r;
    }

    /**
     * Ends a front end's own read warm-up (its {@code files} files read since {@code startNanos}): waits for the JIT
     * compilers, at most {@link Budget#jitWait()}, gives the C heap's free memory back ({@link MallocTrim}), and logs one
     * line ({@code FUSE read warm-up: 1 files, 0.09 s}).
     * An interrupt ends the wait (the thread's interrupt status is kept).
     */
    public static void frontEndDone(String frontEnd, int files, long startNanos, Budget budget) {
        frontEndDone(frontEnd, files, startNanos, budget, () -> false);
    }

    /** The same, ending the wait for the compilers once {@code stop} holds (the front end stops). */
    public static void frontEndDone(String frontEnd, int files, long startNanos, Budget budget, BooleanSupplier stop) {
        boolean idle = false;
        try {
            idle = JitQueue.awaitIdle(budget.jitWait(), stop);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        MallocTrim.trim();                          // the passes' threads left freed C heap in arenas of their own
        LOG.info(String.format("%s read warm-up: %d files, %.2f s%s", frontEnd, files, (System.nanoTime() - startNanos) / 1e9,
                idle ? "" : " (compilers still busy)"));
    }

    private Report run() {
        long wall0 = System.nanoTime();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long cpu0 = mx.getCurrentThreadCpuTime();
        int chunks = 0;
        List<String> warmed = new ArrayList<>();
        int models = 0;
        int files = 0;
        boolean idle = false;
        try {
            Map<String, ConvertedData> kernels = new LinkedHashMap<>();
            models = collect(kernels);
            long cpuLimit = budget.cpu().toNanos();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment scratch = null;
                for (Map.Entry<String, ConvertedData> k : kernels.entrySet()) {
                    if (kernelsStop.getAsBoolean() || mx.getCurrentThreadCpuTime() - cpu0 >= cpuLimit) {
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
            if (budget.readFiles() > 0 && !stop.getAsBoolean()) {
                List<ReadPathWarmup.Region> toRead = regionsToRead(tree, budget.maxModels(), budget.readFiles(), readsEnd.or(stop));
                int[] read = {0};
                long passesEnd = readsEnd.earlierOf(System.nanoTime() + ReadPathWarmup.PASSES_WALL.toNanos());   // a pass stops there too
                JitQueue.settle(() -> read[0] = ReadPathWarmup.run(resolver, toRead, budget.readBytesPerFile(), readsEnd.or(stop), passesEnd),
                        ReadPathWarmup.PASSES, readsEnd.cap(ReadPathWarmup.PASSES_WALL), stop);
                files = read[0];
            }
            idle = budget.jitWait().isZero() || JitQueue.awaitIdle(deadline.cap(budget.jitWait()), stop);   // no wait asked: nothing ran out
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            LOG.fine("warm-up stopped: " + e);
        }
        return new Report(warmed, chunks, mx.getCurrentThreadCpuTime() - cpu0, models, files, System.nanoTime() - wall0, idle);
    }

    /** Fills {@code kernels} with the largest data of each kernel in the first models; returns how many models it looked at. */
    private int collect(Map<String, ConvertedData> kernels) {
        return forEachFile(tree, budget.maxModels(), kernelsStop, (p, f) -> f.source().convertedData().forEach(d -> keep(kernels, d)));
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
            } catch (RuntimeException | Error e) {         // a view that fails (even with an Error) fails that model's reads, not the warm-up
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
            while (n < budget.chunksPerKernel() && !kernelsStop.getAsBoolean() && mx.getCurrentThreadCpuTime() < cpuUntil) {
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
     * The files the front ends' read warm-ups read, all without conversions (read as they are stored) in the first
     * {@code maxModels} models ({@link PlainFiles}).
     */
    public static List<Path> plainFilesToRead(StoreTree tree, int maxModels) {
        return plainFilesToRead(tree, maxModels, () -> false);
    }

    /** The same, looking at no further model once {@code stop} holds (a front end's {@link WarmupDeadline}). */
    public static List<Path> plainFilesToRead(StoreTree tree, int maxModels, BooleanSupplier stop) {
        PlainFiles pick = new PlainFiles();
        forEachFile(tree, maxModels, stop, pick::offer);
        return pick.chosen();
    }

    /**
     * Chooses among the files offered to it those without conversions that a front end's read warm-up reads: the
     * largest, and the one of the most segments if that is another file (a client reading it crosses from one
     * segment to the next, a branch the largest, often one whole blob, never takes). The first offered wins a tie.
     */
    static final class PlainFiles {
        private Path largest;
        private long largestSize = -1;
        private Path mostSegments;
        private int segments = 1;

        void offer(Path path, FileNode f) {
            if (!f.source().convertedData().isEmpty()) {
                return;
            }
            if (f.size() > largestSize) {
                largest = path;
                largestSize = f.size();
            }
            if (f.source().segmentCount() > segments) {
                mostSegments = path;
                segments = f.source().segmentCount();
            }
        }

        /** The chosen files: none, one, or the largest and then the one of the most segments. */
        List<Path> chosen() {
            return Stream.of(largest, mostSegments).filter(Objects::nonNull).distinct().toList();
        }
    }

    /**
     * The parts of files the read path's part reads: for each conversion kernel its largest data in the first
     * {@code maxModels} models (as the kernels' part converts: the start of a converted file is often data of another
     * kernel, or none, and a kernel's small data is not what a client's read spends its time on), and the largest
     * file without conversions, whole; at most {@code maxRegions}, kernels in the order they are found.
     */
    static List<ReadPathWarmup.Region> regionsToRead(StoreTree tree, int maxModels, int maxRegions) {
        return regionsToRead(tree, maxModels, maxRegions, () -> false);
    }

    /** The same, looking at no further model once {@code stop} holds. */
    static List<ReadPathWarmup.Region> regionsToRead(StoreTree tree, int maxModels, int maxRegions, BooleanSupplier stop) {
        Map<String, ReadPathWarmup.Region> best = new LinkedHashMap<>();
        forEachFile(tree, maxModels, stop, (p, f) -> {
            ByteSource source = f.source();
            if (source.convertedData().isEmpty()) {
                offer(best, maxRegions, new ReadPathWarmup.Region(p, f, "", 0, f.size()));
                return;
            }
            for (int i = 0; i < source.segmentCount(); i++) {
                if (source.segment(i) instanceof Segment.Converted c && c.data().kernel() != null) {
                    offer(best, maxRegions, new ReadPathWarmup.Region(p, f, c.data().kernel(), source.start(i), c.data().length()));
                }
            }
        });
        return List.copyOf(best.values());
    }

    /**
     * Where the segments of {@code f} meet (at most {@code max}, spread over the file), for the FUSE warm-up: a
     * client's sequential read crosses each, so the warm-up reads across them too, or the first real crossing would
     * deoptimize the read path's range checks ({@code OpenedSource.blobSegment}), compiled without that branch, in
     * the middle of that client's first read.
     */
    public static long[] segmentBoundaries(FileNode f, int max) {
        ByteSource source = f.source();
        int inner = source.segmentCount() - 1;
        int n = Math.max(0, Math.min(inner, max));
        long[] at = new long[n];
        for (int k = 0; k < n; k++) {
            at[k] = source.start(1 + (int) ((long) k * inner / n));
        }
        return at;
    }

    /** Keeps {@code r} if it is its kernel's first, or longer than the one kept (no new kernel past {@code max}). */
    private static void offer(Map<String, ReadPathWarmup.Region> best, int max, ReadPathWarmup.Region r) {
        ReadPathWarmup.Region old = best.get(r.kernel());
        if (old == null ? best.size() < max : r.length() > old.length()) {
            best.put(r.kernel(), r);
        }
    }
}
