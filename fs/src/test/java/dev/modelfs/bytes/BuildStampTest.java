package dev.modelfs.bytes;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The build's stamp that every on-disk chunk name holds ({@link ConvertedData#BUILD}) is filled in by the build, so an
 * upgraded modelfs never reads chunks an older build converted (the cache directory is on by default).
 */
class BuildStampTest {
    @Test
    void theBuildFillsInItsStamp() {
        assertTrue(ConvertedData.BUILD.matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z"),
                "build.properties filtered by Maven: " + ConvertedData.BUILD);
    }
}
