package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The oracle of the chat-template translation: {@code integration-tests/go/render_template.go} (Go's own
 * {@code text/template} on the data Ollama passes), built once per test JVM with Debian's
 * {@code golang-go} into {@code target/go/}; Go's build cache makes a rebuild of an unchanged source
 * nearly free. A machine without {@code go} fails loudly ({@code ./test} installs it as root).
 */
final class GoRenderer {
    private static Path binary;

    private GoRenderer() {}

    static synchronized Path binary() throws IOException, InterruptedException {
        if (binary == null) {
            Path src = Path.of("go", "render_template.go").toAbsolutePath();
            Path out = Path.of("target", "go", "render_template").toAbsolutePath();
            Env.Run r;
            try {
                r = Env.run(600, List.of("go", "build", "-o", out.toString(), src.toString()));
            } catch (IOException e) {
                fail("go not found: install Debian's golang-go (apt-get install -y golang-go; ./test does as root): " + e.getMessage());
                throw e;
            }
            assertEquals(0, r.exit(), "go build of " + src + " failed:\n" + r.output());
            binary = out;
        }
        return binary;
    }
}
