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

    @Test
    void defaultsAreNoDiskTierAndNoArguments() throws IOException {
        ConversionOptions o = CommandLine.populateCommand(new ConversionOptions());
        assertEquals(10L << 30, o.cacheDirSize, "10G, binary");
        assertNull(o.openDisk(512L << 20));
        assertEquals(List.of(), o.args());
        assertEquals(java.time.Duration.ofSeconds(8), o.warmup(), "the default bound");
        assertEquals(java.time.Duration.ofSeconds(30), CommandLine.populateCommand(new ConversionOptions(), "--warmup-seconds", "30").warmup());
        assertEquals(java.time.Duration.ZERO, CommandLine.populateCommand(new ConversionOptions(), "--no-warmup").warmup());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> CommandLine.populateCommand(new ConversionOptions(), "--warmup-seconds", "0").warmup());
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
