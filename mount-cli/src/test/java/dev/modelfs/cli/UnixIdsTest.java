package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The process's uid and gid, checked against the owner the kernel gives a file this process creates. */
class UnixIdsTest {
    @TempDir
    Path dir;

    @Test
    void idsAreThoseOfTheFilesThisProcessCreates() throws IOException {
        Path f = Files.createFile(dir.resolve("mine"));
        assertEquals(((Number) Files.getAttribute(f, "unix:uid")).longValue(), UnixIds.uid());
        assertEquals(((Number) Files.getAttribute(f, "unix:gid")).longValue(), UnixIds.gid());
    }
}
