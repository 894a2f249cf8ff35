package dev.modelfs.warmup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.format.Vectors;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.tree.FileNode;
import dev.modelfs.serve.ServedTree;
import dev.modelfs.serve.StandardViews;
import dev.modelfs.serve.TinyGgufStore;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel warm-up over a real store on disk (the {@code tiny-llama.gguf} vector as an Ollama model): it
 * warms exactly the kernels of the store's converted files, within its budget, and no byte any reader sees changes.
 */
class KernelWarmupTest {

    @TempDir
    Path root;

    private OllamaStore store() throws IOException {
        return TinyGgufStore.create(root);
    }

    /** The GGUF's tensor types, from the vector's JSON description (written by gguf-py, not by modelfs). */
    private static Set<String> ggufTypes() throws IOException {
        JsonNode d = new ObjectMapper().readTree(Vectors.file("tiny-llama.gguf.json").toFile());
        Set<String> types = new TreeSet<>();
        d.get("tensors").forEach(t -> types.add(t.get("type_name").asText()));
        return types;
    }

    @Test
    void warmsEachKernelTheStoreUsesOnceAndNoOther() throws Exception {
        try (ServedTree served = ServedTree.open(store(), StandardViews.all(), 1 << 20, 60_000)) {
            KernelWarmup.Report r = KernelWarmup.beforeServing(served.tree(), served.resolver(),
                    new KernelWarmup.Budget(16, 64, 3, Duration.ofSeconds(30), 0, 0, Duration.ZERO));
            Set<String> needed = new LinkedHashSet<>();
            TinyGgufStore.files(served.tree()).forEach(f -> f.source().convertedData().stream()
                    .filter(d -> d.kernel() != null).forEach(d -> needed.add(d.kernel())));
            assertFalse(needed.isEmpty());
            assertEquals(needed, Set.copyOf(r.kernels()), "the kernels of the store's converted files, and only those");
            assertEquals(r.kernels().size(), Set.copyOf(r.kernels()).size(), "each kernel once");
            Set<String> types = ggufTypes();
            for (String k : r.kernels()) {
                assertTrue(types.stream().anyMatch(t -> k.contains("GGML " + t + " ")), k + " is a kernel of a type the GGUF has " + types);
            }
            for (String t : List.of("Q4_0", "Q8_0")) {              // quantized types: dequantized to every output type
                for (String out : List.of("F32", "F16", "BF16")) {
                    assertTrue(r.kernels().contains("GGML " + t + " dequantizer" + vectorSuffix(r) + " -> " + out)
                            || r.kernels().stream().anyMatch(k -> k.startsWith("GGML " + t + " ") && k.endsWith("-> " + out)),
                            t + " -> " + out + " warmed: " + r.kernels());
                }
            }
            assertTrue(r.kernels().stream().noneMatch(k -> k.contains("Q4_K") || k.contains("MLX")), r.kernels().toString());
            assertTrue(r.chunks() >= r.kernels().size() && r.chunks() <= 3 * r.kernels().size(), r.chunks() + " chunks");
            assertEquals(1, r.models());
            assertEquals(0, r.files(), "no file read without a read budget");
            assertEquals(0, served.chunks().conversions(), "the warm-up converts into its own buffer, never into the chunk cache");
        }
    }

    private static String vectorSuffix(KernelWarmup.Report r) {
        return r.kernels().stream().anyMatch(k -> k.contains("(Vector API)")) ? " (Vector API)" : "";
    }

    @Test
    void staysWithinItsBudget() throws Exception {
        try (ServedTree served = ServedTree.open(store(), StandardViews.all(), 1 << 20, 60_000)) {
            KernelWarmup.Report two = KernelWarmup.beforeServing(served.tree(), served.resolver(),
                    new KernelWarmup.Budget(16, 2, 1, Duration.ofSeconds(30), 1, 1 << 20, Duration.ZERO));
            assertEquals(2, two.kernels().size(), "at most maxKernels");
            assertEquals(2, two.chunks(), "one chunk per kernel");
            assertEquals(1, two.files(), "at most readFiles files read");
            KernelWarmup.Report noCpu = KernelWarmup.beforeServing(served.tree(), served.resolver(),
                    KernelWarmup.Budget.DEFAULT.kernelsOnly().withCpu(Duration.ZERO));
            assertEquals(0, noCpu.chunks(), "no CPU budget, no conversion");
            KernelWarmup.Report noModels = KernelWarmup.beforeServing(served.tree(), served.resolver(),
                    new KernelWarmup.Budget(0, 64, 24, Duration.ofSeconds(30), 8, 1 << 20, Duration.ZERO));
            assertEquals(0, noModels.models());
            assertTrue(noModels.kernels().isEmpty());
            assertEquals(0, noModels.files(), "files are chosen among the models looked at");
            KernelWarmup.Report stopped = KernelWarmup.beforeServing(served.tree(), served.resolver(), KernelWarmup.Budget.DEFAULT, () -> true);
            assertEquals(0, stopped.chunks() + stopped.files(), "stopped before the first chunk");
            KernelWarmup.Report late = KernelWarmup.beforeServing(served.tree(), served.resolver(), KernelWarmup.Budget.DEFAULT,
                    () -> false, WarmupDeadline.after(Duration.ZERO));
            assertEquals(0, late.chunks() + late.files(), "a passed deadline ends the warm-up before the first chunk");
            KernelWarmup.Report unbounded = KernelWarmup.beforeServing(served.tree(), served.resolver(), KernelWarmup.Budget.DEFAULT,
                    () -> false, WarmupDeadline.none());
            assertTrue(unbounded.chunks() > 0 && unbounded.files() > 0, "without a deadline the same store is warmed");
        }
    }

    @Test
    void aDeadlineCapsWaitsAndStopConditions() {
        WarmupDeadline passed = WarmupDeadline.after(Duration.ZERO);
        assertTrue(passed.passed());
        assertEquals(Duration.ZERO, passed.cap(Duration.ofSeconds(5)));
        assertTrue(passed.or(() -> false).getAsBoolean());
        WarmupDeadline far = WarmupDeadline.after(Duration.ofHours(1));
        assertFalse(far.passed());
        assertEquals(Duration.ofSeconds(5), far.cap(Duration.ofSeconds(5)));
        assertTrue(far.cap(Duration.ofHours(2)).compareTo(Duration.ofHours(1)) <= 0, "capped at the time left");
        assertFalse(far.or(() -> false).getAsBoolean());
        assertTrue(far.or(() -> true).getAsBoolean());
        assertEquals(far.atNanos(), far.earlierOf(far.atNanos() + 1));
        assertEquals(far.atNanos() - 1, far.earlierOf(far.atNanos() - 1));
        WarmupDeadline fixed = new WarmupDeadline(1000, 2000);
        assertEquals(new WarmupDeadline(1000, 1400), fixed.phase(WarmupDeadline.KERNELS), "the kernels' share of the wall time");
        assertEquals(new WarmupDeadline(1000, 1700), fixed.phase(WarmupDeadline.READ_PATH));
        assertEquals(WarmupDeadline.none(), WarmupDeadline.none().phase(0.5), "no deadline has no phases");
        assertFalse(WarmupDeadline.none().passed());
        assertEquals(Duration.ofDays(9), WarmupDeadline.none().cap(Duration.ofDays(9)));
    }

    @Test
    void everyFileReadsTheSameBytesWithAndWithoutTheWarmUp() throws Exception {
        OllamaStore store = store();
        Map<Long, String> cold;
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 1 << 20, 60_000)) {
            cold = TinyGgufStore.digests(served);
        }
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 1 << 20, 60_000)) {
            KernelWarmup.Report r = KernelWarmup.beforeServing(served.tree(), served.resolver(), KernelWarmup.Budget.DEFAULT);
            assertTrue(r.chunks() > 0);
            assertTrue(r.files() > 0, "the read path's part read files");
            assertTrue(r.jitIdle(), "the compilers went idle within the budget's wait");
            assertEquals(0, served.chunks().conversions(), "the read path's part converts into a private cache, never the served one");
            assertEquals(cold, TinyGgufStore.digests(served));
        }
        assertTrue(cold.size() > 10, cold.keySet().toString());
    }
}
