package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The listing {@code modelfs demo} prints, over a plain folder (the mount itself is the integration tests' DemoCommandTest). */
class DemoCommandTest {
    @TempDir
    Path dir;

    @Test
    void foldersEndInASlashAndFilesAreIndentedWithTheirSize() throws IOException {
        Files.createDirectories(dir.resolve("m/fp16"));
        Files.write(dir.resolve("m/fp16/model.safetensors"), new byte[1500]);
        Files.write(dir.resolve("m/config.json"), new byte[12]);
        PrintStream out = System.out;
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        synchronized (CommandsTest.class) {
            System.setOut(new PrintStream(o, true, StandardCharsets.UTF_8));
            try {
                DemoCommand.list(dir);
            } finally {
                System.setOut(out);
            }
        }
        String pad = " ".repeat(40 - "  config.json".length());
        assertEquals(List.of("m/", "  config.json" + pad + " " + String.format("%12s", "12 B"), "  fp16/",
                        "    model.safetensors" + " ".repeat(40 - "    model.safetensors".length()) + " " + String.format("%12s", "1.5 KB")),
                o.toString(StandardCharsets.UTF_8).lines().toList());
    }
}
