package dev.modelfs.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.read.OpenedSource;
import dev.modelfs.telemetry.FileKind;
import dev.modelfs.testing.Poll;
import dev.modelfs.tree.FileNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ConversionGate} and the {@link ServePolicy} opens it holds (docs/DESIGN.md §2.8): converted files wait
 * while a warm-up runs, at most until its deadline; every other file, and a warm-up's own policy, never waits.
 */
class ConversionGateTest {
    @TempDir
    Path tmp;

    @Test
    void anOpenGateLetsEveryWaitPassAtOnce() {
        ConversionGate g = new ConversionGate();
        assertFalse(g.held());
        assertTrue(g.await());
        g.hold(System.nanoTime() + TimeUnit.HOURS.toNanos(1));
        g.release();
        assertTrue(g.await(), "released");
        g.release();                                                // idempotent
        assertTrue(g.await());
    }

    @Test
    void aHeldGateWaitsForItsReleaseFromAnotherThread() throws Exception {
        ConversionGate g = new ConversionGate();
        g.hold(System.nanoTime() + TimeUnit.HOURS.toNanos(1));
        CompletableFuture<Boolean> waited = CompletableFuture.supplyAsync(g::await);
        AtomicReference<Thread> waiter = new AtomicReference<>();
        Poll.until("the waiter blocks", Duration.ofSeconds(10), () -> {
            Thread t = Thread.getAllStackTraces().keySet().stream()
                    .filter(th -> th.getState() == Thread.State.TIMED_WAITING
                            && List.of(th.getStackTrace()).stream().anyMatch(e -> e.getMethodName().equals("await")
                            && e.getClassName().equals(ConversionGate.class.getName())))
                    .findFirst().orElse(null);
            waiter.set(t);
            return t != null;
        });
        assertFalse(waited.isDone(), "still held");
        g.release();
        assertTrue(waited.get(10, TimeUnit.SECONDS), "released, not timed out");
    }

    @Test
    void aHeldGateLetsWaitsPassAtItsDeadline() {
        ConversionGate g = new ConversionGate();
        long t0 = System.nanoTime();
        g.hold(t0 + TimeUnit.MILLISECONDS.toNanos(200));
        assertFalse(g.await(), "the deadline passed before any release");
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(200), "not before the deadline");
        assertTrue(g.held(), "a deadline does not release the gate: the warm-up does");
    }

    @Test
    void anInterruptEndsAWaitAndIsKept() {
        ConversionGate g = new ConversionGate();
        g.hold(System.nanoTime() + TimeUnit.HOURS.toNanos(1));
        Thread.currentThread().interrupt();
        try {
            assertFalse(g.await());
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
    }

    /** A served tree's policy: converted opens wait while its gate is held; plain files and the warm-up policy do not. */
    @Test
    void onlyOpensOfConvertedFilesWait() throws Exception {
        try (ServedTree served = ServedTree.open(TinyGgufStore.create(tmp.resolve("store")), StandardViews.all(), 16 << 20, 60_000)) {
            List<FileNode> files = TinyGgufStore.files(served.tree());
            FileNode converted = files.stream().filter(f -> f.source().kind() == FileKind.CONVERTED).findFirst().orElseThrow();
            FileNode plain = files.stream().filter(f -> f.source().kind() == FileKind.PASSTHROUGH).findFirst().orElseThrow();
            ServePolicy policy = served.policy(0, 0);
            served.conversions().hold(System.nanoTime() + TimeUnit.HOURS.toNanos(1));
            try (OpenedSource o = policy.open(plain)) {
                assertEquals(plain.size(), o.size(), "a file without conversions opens while the gate is held");
            }
            try (OpenedSource o = served.warmupPolicy(0, 0).open(converted)) {
                assertEquals(converted.size(), o.size(), "the warm-up's own policy never waits");
            }
            AtomicBoolean opened = new AtomicBoolean();
            CompletableFuture<Long> size = CompletableFuture.supplyAsync(() -> {
                try (OpenedSource o = policy.open(converted)) {
                    opened.set(true);
                    return o.size();
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            Poll.until("the converted open waits on the gate", Duration.ofSeconds(10), () -> Thread.getAllStackTraces().entrySet().stream()
                    .anyMatch(e -> e.getKey().getState() == Thread.State.TIMED_WAITING && List.of(e.getValue()).stream()
                            .anyMatch(f -> f.getClassName().equals(ServePolicy.class.getName()) && f.getMethodName().equals("open"))));
            assertFalse(opened.get(), "not opened while held");
            served.conversions().release();
            assertEquals(converted.size(), size.get(10, TimeUnit.SECONDS), "opened once released");
        }
    }
}
