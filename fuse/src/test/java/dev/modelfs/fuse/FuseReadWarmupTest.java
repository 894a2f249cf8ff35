package dev.modelfs.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.serve.ServedTree;
import dev.modelfs.serve.StandardViews;
import dev.modelfs.serve.TinyGgufStore;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.tree.FileNode;
import dev.modelfs.warmup.KernelWarmup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The FUSE half of the warm-up calls a {@code read_buf} upcall stub itself, as libfuse does, without its reads being
 * reported (here before the kernel mount exists, behind a closed {@code GatedTelemetry}); and {@code MountSession}
 * runs it behind the served mount through a private {@code ModelFs} whose reads reach no metric, converted opens
 * waiting for it: real in-process mounts (need {@code /dev/fuse} and {@code fusermount}, fail without them) over a
 * real store.
 */
class FuseReadWarmupTest {
    @TempDir
    Path tmp;

    @Test
    void theWorkerLoopRunsOverASessionOfItsOwnWithoutAMount() throws Throwable {
        Path mp = Files.createDirectories(tmp.resolve("never-mounted"));
        for (int run = 0; run < 2; run++) {                  // libfuse's session and channel are freed each time
            assertEquals(700, WorkerLoopWarmup.run(700), "each request received from the channel and processed");
        }
        assertEquals(FuseReadWarmup.CALLS, FuseReadWarmup.runWorkerLoop());
        assertFalse(MountTable.isMounted(mp));
    }

    @Test
    void theMountServesBeforeItsWarmUpWhichReportsNothingWhileConvertedOpensWaitForIt() throws Exception {
        OllamaStore store = TinyGgufStore.create(tmp.resolve("store"));
        Path mp = Files.createDirectories(tmp.resolve("mnt-bg"));
        CountingTelemetry telemetry = new CountingTelemetry();
        MountOptions opts = new MountOptions(false, 0, 0, List.of(), 16 << 20, 60_000, false, 2, null, 0,
                java.time.Duration.ofSeconds(600), false, false, false, 0);
        Path converted;
        try (MountSession session = MountSession.mount(store, mp, opts, StandardViews.all(), telemetry)) {
            assertTrue(MountTable.isMounted(mp), "mounted when mount returns");
            try (Stream<Path> s = Files.list(mp)) {
                assertEquals(List.of("tiny"), s.map(p -> p.getFileName().toString()).toList(), "listed before any warm-up");
            }
            assertEquals(null, session.warmup(), "no warm-up before warmUp()");
            try (Stream<Path> s = Files.walk(mp)) {
                converted = s.filter(p -> p.getFileName().toString().equals("model.safetensors")).findFirst().orElseThrow();
            }
            long before = telemetry.reads.get();
            session.warmUp();
            var reader = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    byte[] b = Files.readAllBytes(converted);
                    return session.served().conversions().held() ? -1 : b.length;
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            assertTrue(session.warmup().await(java.time.Duration.ofSeconds(120)), "the warm-up ends");
            int read = reader.get(120, java.util.concurrent.TimeUnit.SECONDS);
            assertTrue(read > 0, "the converted file was read once the warm-up was done (gate released): " + read);
            assertEquals(Files.size(converted), read);
            long clientReads = telemetry.reads.get() - before;
            assertTrue(clientReads > 0, "the client's reads are reported");
            byte[] again = Files.readAllBytes(converted);
            assertEquals(read, again.length);
            // the warm-up read model.gguf 6,000 times per pass through its private ModelFs: none of it is counted
            assertTrue(telemetry.reads.get() - before < 1000, "the warm-up's reads reach no metric: " + telemetry.reads.get());
        }
        assertFalse(MountTable.isMounted(mp));
        Path mp2 = Files.createDirectories(tmp.resolve("mnt-stop"));
        MountSession session = MountSession.mount(store, mp2, opts, StandardViews.all(), telemetry);
        session.warmUp();
        session.close();                                            // while the warm-up runs (or just after)
        assertFalse(session.warmup().running(), "a stop ends the warm-up");
        assertFalse(session.served().conversions().held(), "and releases the gate");
        assertFalse(MountTable.isMounted(mp2));
    }
}
