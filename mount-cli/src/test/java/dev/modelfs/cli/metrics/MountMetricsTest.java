package dev.modelfs.cli.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The endpoint a mount's root names in {@code user.modelfs.metrics}, written here with the JDK on a plain folder. */
class MountMetricsTest {
    @TempDir
    Path dir;

    @Test
    void theRootsAttributeOrNothing() throws IOException {
        assertEquals(Optional.empty(), MountMetrics.endpoint(dir));
        assertEquals(Optional.empty(), MountMetrics.endpoint(dir.resolve("absent")));
        Files.getFileAttributeView(dir, UserDefinedFileAttributeView.class)
                .write("modelfs.metrics", ByteBuffer.wrap("127.0.0.1:9464".getBytes(StandardCharsets.UTF_8)));
        assertEquals(Optional.of("127.0.0.1:9464"), MountMetrics.endpoint(dir));
    }
}
