package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code ./modelfs} launcher's AOT cache (scripts/lib.sh {@code aot_flags}, JDK 25 {@code -XX:AOTCache}): the
 * first start of a serving command trains the cache of this jar, JDK and flags once, in the background; the next
 * start maps it (the JVM's own {@code -Xlog:aot} says so); a damaged cache is neither a failed start nor a word on
 * the terminal, and is not trained again. Runs the launcher with its own {@code XDG_CACHE_HOME}.
 */
class LauncherAotCacheTest {
    @TempDir
    Path tmp;

    @Test
    void theFirstStartTrainsTheCacheOnceTheNextStartsFromItAndADamagedOneIsIgnored() throws Exception {
        Env.requireFuse();
        String launcher = Path.of("..", "modelfs").toAbsolutePath().normalize().toString();
        Path aot = tmp.resolve("cache/modelfs/aot");
        Map<String, String> env = Map.of("XDG_CACHE_HOME", tmp.resolve("cache").toString());

        Env.Run first = Env.run(180, List.of(launcher, "demo", tmp.resolve("mnt1").toString()), env);
        assertEquals(0, first.exit(), first.output());
        Path cache = awaitCache(aot);

        Map<String, String> logged = new HashMap<>(env);
        logged.put("MODELFS_JAVA_OPTS", "-Xlog:aot");        // after the launcher's -Xlog:aot*=off: the JVM's AOT log on again
        Env.Run second = Env.run(180, List.of(launcher, "demo", tmp.resolve("mnt2").toString()), logged);
        assertEquals(0, second.exit(), second.output());
        assertTrue(second.output().contains("Opened AOT cache " + cache), "the second start maps the cache:\n" + second.output());
        assertEquals(List.of(cache.getFileName().toString()), caches(aot), "one cache, made once");

        // 64 KiB of noise past its header: unverified, the JVM maps it and crashes (ShouldNotReachHere in constantTag.cpp,
        // JDK 25.0.3); the launcher's checksum check sends it on without the cache
        try (RandomAccessFile f = new RandomAccessFile(cache.toFile(), "rw")) {
            byte[] noise = new byte[64 << 10];
            new Random(42).nextBytes(noise);
            f.seek(64 << 10);
            f.write(noise);
        }
        Env.Run third = Env.run(180, List.of(launcher, "demo", tmp.resolve("mnt3").toString()), env);
        assertEquals(0, third.exit(), third.output());
        assertTrue(third.output().contains("unmounted " + tmp.resolve("mnt3")), third.output());
        for (String quiet : List.of("[aot]", "[cds]", "AOT", "fatal error")) {
            assertFalse(third.output().contains(quiet), "nothing about the damaged cache: " + quiet + "\n" + third.output());
        }
        try (Stream<Path> s = Files.list(aot)) {
            assertEquals(1, s.filter(p -> p.getFileName().toString().endsWith(".aot.trained")).count(), "trained once");
        }
    }

    /** The training runs in the background, niced: waits for its cache (renamed into place when whole). */
    private static Path awaitCache(Path aot) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + 300_000_000_000L;
        while (System.nanoTime() < deadline) {
            List<String> c = Files.isDirectory(aot) ? caches(aot) : List.of();
            if (!c.isEmpty()) {
                return aot.resolve(c.getFirst());
            }
            Thread.sleep(200);
        }
        StringBuilder logs = new StringBuilder();
        if (Files.isDirectory(aot)) {
            try (Stream<Path> s = Files.list(aot)) {
                for (Path p : s.filter(p -> p.toString().endsWith(".log")).toList()) {
                    logs.append(p).append(":\n").append(Files.readString(p));
                }
            }
        }
        return fail("no AOT cache trained within 300 s in " + aot + "\n" + logs);
    }

    private static List<String> caches(Path aot) throws IOException {
        try (Stream<Path> s = Files.list(aot)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.matches("modelfs-[0-9a-f]{16}\\.aot")).sorted().toList();
        }
    }
}
