package dev.modelfs.cli;

import static dev.modelfs.cli.CommandsTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code verify}: a deleted blob breaks exactly the model that uses it, in the JSON report too. */
class VerifyCommandTest {
    @TempDir
    Path dir;

    @Test
    void aMissingBlobBreaksItsModelOnly() throws IOException {
        new DemoStore(dir).write();
        Path gguf;
        try (Stream<Path> s = Files.list(dir.resolve("blobs"))) {
            gguf = s.filter(p -> {
                try {
                    byte[] head = new byte[4];
                    try (var in = Files.newInputStream(p)) {
                        return in.read(head) == 4 && new String(head, java.nio.charset.StandardCharsets.US_ASCII).equals("GGUF");
                    }
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }).findFirst().orElseThrow();
        }
        Files.delete(gguf);
        CommandsTest.Result r = run("verify", "--store", dir.toString(), "--json");
        assertEquals(VerifyCommand.BROKEN, r.exit(), r.err());
        JsonNode report = new ObjectMapper().readTree(r.out());
        String text = report.toString();
        assertTrue(text.contains(gguf.getFileName().toString().substring("sha256-".length())), text);
        assertEquals(0, run("verify", "--store", dir.toString(), "demo-st:int4").exit(), "the other model is intact");
        assertEquals(VerifyCommand.BROKEN, run("verify", "--store", dir.toString(), "demo-llama").exit());
    }
}
