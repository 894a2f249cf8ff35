package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.cache.DiskChunkStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The conversion options as picocli parses them, their disk tier, and the arguments a --daemon child gets back. */
class ConversionOptionsTest {
    @TempDir
    Path dir;

    /** Options as parsed from {@code args}, naming their default cache directory from {@code env}. */
    private static ConversionOptions parsed(java.util.Map<String, String> env, String... args) {
        ConversionOptions o = new ConversionOptions();
        o.environment = env;
        return CommandLine.populateCommand(o, args);
    }

    @Test
    void theDefaultIsADiskTierInTheXdgCacheAndADaemonGetsItByName() throws IOException {
        Path xdg = dir.resolve("xdg");
        ConversionOptions o = parsed(java.util.Map.of("XDG_CACHE_HOME", xdg.toString(), "HOME", dir.resolve("home").toString()));
        assertEquals(10L << 30, o.cacheDirSize, "10G, binary");
        Path expected = xdg.resolve("modelfs/converted");
        try (DiskChunkStore disk = o.openDisk(512L << 20)) {
            assertTrue(disk != null && Files.isDirectory(expected), "the default disk tier's folder");
        }
        assertEquals(List.of("--cache-dir", expected.toString(), "--cache-dir-size", Long.toString(10L << 30)), o.args());
        assertEquals(java.time.Duration.ofSeconds(8), o.warmup(), "the default bound");
        assertEquals(java.time.Duration.ofSeconds(30), CommandLine.populateCommand(new ConversionOptions(), "--warmup-seconds", "30").warmup());
        assertEquals(java.time.Duration.ZERO, CommandLine.populateCommand(new ConversionOptions(), "--no-warmup").warmup());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> CommandLine.populateCommand(new ConversionOptions(), "--warmup-seconds", "0").warmup());
    }

    @Test
    void theDefaultFollowsModelfsCacheDirThenXdgThenHome() {
        assertEquals(Path.of("/srv/cache"), DefaultCacheDir.of(java.util.Map.of("MODELFS_CACHE_DIR", "/srv/cache", "XDG_CACHE_HOME", "/x", "HOME", "/h")));
        assertEquals(Path.of("/x/modelfs/converted"), DefaultCacheDir.of(java.util.Map.of("MODELFS_CACHE_DIR", "rel", "XDG_CACHE_HOME", "/x", "HOME", "/h")),
                "a relative value is ignored");
        assertEquals(Path.of("/h/.cache/modelfs/converted"), DefaultCacheDir.of(java.util.Map.of("XDG_CACHE_HOME", "relative", "HOME", "/h")));
        assertNull(DefaultCacheDir.of(java.util.Map.of()), "no HOME: none");
    }

    @Test
    void noCacheDirIsMemoryOnlyAndADefaultThatCannotBeMadeIsToo() throws IOException {
        Path xdg = dir.resolve("xdg-off");
        ConversionOptions off = parsed(java.util.Map.of("XDG_CACHE_HOME", xdg.toString()), "--no-cache-dir");
        assertNull(off.openDisk(512L << 20));
        assertEquals(List.of("--no-cache-dir"), off.args());
        assertTrue(Files.notExists(xdg), "nothing made");
        Path file = Files.writeString(dir.resolve("a-file"), "x");           // the default's parent is a file
        ConversionOptions blocked = parsed(java.util.Map.of("XDG_CACHE_HOME", file.toString()));
        assertNull(blocked.openDisk(512L << 20), "memory only, one log line");
        assertEquals(List.of("--no-cache-dir"), blocked.args());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> parsed(java.util.Map.of(), "--cache-dir", dir.toString(), "--no-cache-dir").openDisk(1 << 20));
    }

    @Test
    void theArgumentsRoundTripAndTheDiskTierIsCreated() throws IOException {
        Path cache = dir.resolve("chunks");
        ConversionOptions o = CommandLine.populateCommand(new ConversionOptions(), "--cache-dir", cache.toString(), "--cache-dir-size", "64M",
                "--no-warmup", "--warmup-seconds", "30");
        assertEquals(List.of("--cache-dir", cache.toAbsolutePath().toString(), "--cache-dir-size", Long.toString(64L << 20), "--no-warmup",
                "--warmup-seconds", "30"), o.args());
        ConversionOptions again = CommandLine.populateCommand(new ConversionOptions(), o.args().toArray(String[]::new));
        assertEquals(o.args(), again.args(), "a child parses what the parent passes into the same options");
        try (DiskChunkStore disk = o.openDisk(512L << 20)) {
            assertTrue(Files.isDirectory(cache), "the disk tier's folder");
        }
    }
}
