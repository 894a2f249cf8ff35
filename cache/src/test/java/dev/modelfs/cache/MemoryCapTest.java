package dev.modelfs.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MemoryCapTest {
    @TempDir
    Path root;

    private void put(String path, String value) throws IOException {
        Path f = root.resolve(path);
        Files.createDirectories(f.getParent());
        Files.writeString(f, value + "\n");
    }

    @Test
    void v2TakesTheSmallestLimitOfTheCgroupAndItsAncestors() throws IOException {
        put("system.slice/memory.max", "1073741824");
        put("system.slice/modelfs.service/memory.max", "max");
        assertEquals(OptionalLong.of(1L << 30), MemoryCap.limit(List.of("0::/system.slice/modelfs.service"), root));
        put("system.slice/modelfs.service/memory.max", "536870912");
        assertEquals(OptionalLong.of(1L << 29), MemoryCap.limit(List.of("0::/system.slice/modelfs.service"), root));
    }

    @Test
    void v1ReadsTheMemoryControllerAndTreatsItsHugeDefaultAsNoLimit() throws IOException {
        put("memory/test/memory.limit_in_bytes", "9223372036854771712");
        List<String> lines = List.of("9:name=systemd:/", "4:memory:/test", "1:cpu:/");
        assertEquals(OptionalLong.empty(), MemoryCap.limit(lines, root));
        put("memory/test/memory.limit_in_bytes", "402653184");
        assertEquals(OptionalLong.of(384L << 20), MemoryCap.limit(lines, root));
        assertEquals(OptionalLong.empty(), MemoryCap.limit(List.of("4:memory:/elsewhere"), root));
    }

    @Test
    void theChunkCacheIsCutToAQuarterOfALowerLimitAndNeverGrown() {
        assertEquals(512L << 20, MemoryCap.chunkCacheBytes(512L << 20, OptionalLong.empty()));
        assertEquals(512L << 20, MemoryCap.chunkCacheBytes(512L << 20, OptionalLong.of(4L << 30)));
        assertEquals(128L << 20, MemoryCap.chunkCacheBytes(512L << 20, OptionalLong.of(512L << 20)));
        assertEquals(MemoryCap.MIN_CACHE, MemoryCap.chunkCacheBytes(512L << 20, OptionalLong.of(64L << 20)));
        assertEquals(16L << 20, MemoryCap.chunkCacheBytes(16L << 20, OptionalLong.of(64L << 20)));
    }
}
