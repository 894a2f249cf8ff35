package dev.modelfs.serve;

import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.cache.CompleteFiles;
import dev.modelfs.cache.DiskChunkStore;
import dev.modelfs.cache.ThreadNice;
import dev.modelfs.read.OpenedSource;
import dev.modelfs.read.ReadAhead;
import dev.modelfs.telemetry.FileKind;
import dev.modelfs.telemetry.Telemetry;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.Node;
import dev.modelfs.tree.StoreTree;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;

/**
 * Converts models' most loaded files into the cache directory before any reader asks for them (docs/DESIGN.md §2.7
 * "Converted ahead", SEMANTICS.md "The chunk cache directory"), so that a model's first load is served whole, by kernel
 * passthrough, as every later one is. The files, relative to a model's directory: a synthesized {@code model.gguf}
 * (llama.cpp; {@code COMPONENT/model.gguf} too), a GGUF model's {@code model.safetensors} (its Hugging Face folder,
 * what {@code from_pretrained(dir)} loads) and otherwise the {@code bf16/} folder's weights (transformers' and
 * diffusers' {@code from_pretrained(dir + "/bf16")} of a safetensors model), each only when it has a complete-file
 * name ({@code FileIdentity}: converted with an identity, or a reassembled GGUF such as a translated {@code model.gguf}
 * of Ollama's dialect, which llama.cpp maps): a blob or a reassembled safetensors file is served at the disk's speed
 * already. Models go newest first (a model just pulled before those converted long ago), once the front
 * end's warm-up is done, and again after every change of the store.
 *
 * <p>Invariants: one thread ({@value #THREAD}), at nice {@value ThreadNice#LOWEST} (it gets a CPU only when no
 * reader's thread wants one); a file is converted through a chunk cache of its own ({@value #CHUNKS} bytes, memory
 * only: no reader's cached chunk is evicted and no chunk file written) straight into its complete file
 * ({@link CompleteFiles#assemble}: temporary, checksummed, renamed into place), one file at a time through one native
 * buffer of {@value #STEP} bytes allocated once; a file is converted only when its complete file is absent and it
 * fits the directory's room with {@value #HEADROOM_PERCENT} % of the bound left over, so converting ahead never makes
 * the size bound trim anything; a file that fails is logged once (FINE) and not tried again while this process serves;
 * {@link #stop} ends it within a step (a file being written then is abandoned, nothing installed).
 */
final class ConvertAhead {
    private static final Logger LOG = Logger.getLogger(ConvertAhead.class.getName());
    /** The thread's name. */
    static final String THREAD = "modelfs-convert-ahead";
    /** The files of a model's own folder converted ahead (globs over a path relative to the model's directory). */
    static final List<String> TOP = List.of("model.gguf", "*/model.gguf", "model.safetensors");
    /** The files converted ahead when the model's own {@code model.safetensors} is not converted (a safetensors model). */
    static final List<String> BF16 = List.of("bf16/*.safetensors", "bf16/*/*.safetensors");
    static final int STEP = 1 << 20;
    static final long CHUNKS = 16L << 20;
    static final int HEADROOM_PERCENT = 15;
    private static final long POLL_MILLIS = 200;

    private final StoreTree tree;
    private final BlobResolver resolver;
    private final DiskChunkStore disk;
    private final CompleteFiles completeFiles;
    private final CompleteFileServing complete;
    private final ConversionGate gate;
    private final List<PathMatcher> top = matchers(TOP);
    private final List<PathMatcher> bf16 = matchers(BF16);
    private final Set<String> failed = new HashSet<>();
    private final LongAdder converted = new LongAdder();
    private final LongAdder passes = new LongAdder();
    private final Thread thread;
    private volatile boolean stopping;

    private ConvertAhead(StoreTree tree, BlobResolver resolver, DiskChunkStore disk, CompleteFileServing complete,
                         ConversionGate gate) {
        this.tree = tree;
        this.resolver = resolver;
        this.disk = disk;
        this.completeFiles = disk.completeFiles();
        this.complete = complete;
        this.gate = gate;
        this.thread = Thread.ofPlatform().name(THREAD).daemon().unstarted(this::run);
    }

    private static List<PathMatcher> matchers(List<String> globs) {
        return globs.stream().map(g -> FileSystems.getDefault().getPathMatcher("glob:" + g)).toList();
    }

    /**
     * Starts converting ahead over {@code tree} into the cache directory {@code disk}, once {@code gate} lets
     * conversions start.
     */
    static ConvertAhead start(StoreTree tree, BlobResolver resolver, DiskChunkStore disk, CompleteFileServing complete,
                              ConversionGate gate) {
        ConvertAhead a = new ConvertAhead(tree, resolver, disk, complete, gate);
        a.thread.start();
        return a;
    }

    /** Files converted ahead and installed whole so far. */
    long converted() {
        return converted.sum();
    }

    /** Passes over the store's models completed so far (tests wait for one). */
    long passes() {
        return passes.sum();
    }

    /** Asks the thread to stop and waits up to {@code max} for it; whether it has ended. */
    boolean stop(Duration max) {
        stopping = true;
        try {
            thread.join(max);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    private void run() {
        if (!ThreadNice.set(ThreadNice.LOWEST)) {
            LOG.fine("converting ahead at the process's priority: the kernel refused nice " + ThreadNice.LOWEST);
        }
        try (Arena arena = Arena.ofConfined(); ChunkCache chunks = new ChunkCache(CHUNKS)) {
            MemorySegment buffer = arena.allocate(STEP, 4096);
            gate.await();
            StoreTree.Snapshot seen = null;
            while (!stopping) {
                StoreTree.Snapshot now = tree.snapshot();
                if (now != seen) {
                    seen = now;
                    pass(chunks, buffer);
                    passes.increment();
                } else {
                    Thread.sleep(POLL_MILLIS);
                }
            }
        } catch (InterruptedException e) {
            // stopping
        } catch (RuntimeException | Error e) {              // never a reason to stop serving
            LOG.warning("converting ahead stopped: " + e);
        }
    }

    /** One pass over the store's models, newest first. */
    private void pass(ChunkCache chunks, MemorySegment buffer) {
        List<Map.Entry<String, StoreTree.ModelEntry>> models = new ArrayList<>(tree.models().entrySet());
        models.sort(Comparator.comparingLong((Map.Entry<String, StoreTree.ModelEntry> e) -> e.getValue().dir().mtimeNanos())
                .reversed());
        for (Map.Entry<String, StoreTree.ModelEntry> m : models) {
            Map<String, FileNode> wanted = new LinkedHashMap<>();
            try {
                DirNode dir = m.getValue().dir();
                collect(dir, "", 1, top, wanted);
                if (!(wanted.get("model.safetensors") instanceof FileNode own && own.source().kind() == FileKind.CONVERTED)) {
                    collect(dir, "", 2, bf16, wanted);
                }
            } catch (RuntimeException e) {                  // a model that cannot be built is the front ends' to report
                LOG.fine("not converting ahead " + m.getKey() + ": " + e);
                continue;
            }
            for (Map.Entry<String, FileNode> f : wanted.entrySet()) {
                if (stopping) {
                    return;
                }
                convert(m.getKey() + "/" + f.getKey(), f.getValue().source(), chunks, buffer);
            }
        }
    }

    /** The files of {@code dir} (at {@code rel} in its model, at most {@code depth} folders down) that {@code globs} name. */
    private static void collect(DirNode dir, String rel, int depth, List<PathMatcher> globs, Map<String, FileNode> out) {
        for (Map.Entry<String, Node> c : dir.children().entrySet()) {
            String path = rel.isEmpty() ? c.getKey() : rel + "/" + c.getKey();
            if (c.getValue() instanceof FileNode f) {
                Path p = Path.of(path);
                if (globs.stream().anyMatch(g -> g.matches(p))) {
                    out.put(path, f);
                }
            } else if (c.getValue() instanceof DirNode d && depth > 0) {
                collect(d, path, depth - 1, globs, out);
            }
        }
    }

    /** Converts {@code source}, the file at {@code path} in the tree, into its complete file. */
    private void convert(String path, ByteSource source, ChunkCache chunks, MemorySegment buffer) {
        String name = complete.nameOf(source);
        if (name == null || complete.present(name) || failed.contains(name)) {
            return;
        }
        long size = source.size();
        if (disk.room() - size < disk.bound() / 100 * HEADROOM_PERCENT) {
            LOG.fine("not converting ahead " + path + " (" + size + " bytes): the cache directory has " + disk.room()
                    + " bytes of room");
            return;
        }
        long t0 = System.nanoTime();
        boolean installed;
        try (OpenedSource s = OpenedSource.open(source, resolver, chunks, ReadAhead.NONE, Telemetry.NONE)) {
            installed = completeFiles.assemble(name, size, sink -> {
                for (long at = 0; at < size; at += STEP) {
                    if (stopping) {
                        throw new InterruptedIOException("stopping");
                    }
                    long n = Math.min(STEP, size - at);
                    s.read(at, buffer, 0, n);
                    sink.write(buffer.asSlice(0, n));
                }
            });
        } catch (IOException | RuntimeException e) {
            installed = false;
        }
        if (installed) {
            converted.increment();
            LOG.info(String.format("converted ahead: %s (%.1f MB) in %.1f s", path, size / 1e6, (System.nanoTime() - t0) / 1e9));
        } else if (!stopping) {
            failed.add(name);
            LOG.fine("converting " + path + " ahead failed (a reader converts it as before)");
        }
    }
}
