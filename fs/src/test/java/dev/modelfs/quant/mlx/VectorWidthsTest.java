package dev.modelfs.quant.mlx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.quant.Kernels;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The vector kernels at each width they are written for: this JVM's (512 bits on the development machine) and, in a
 * child JVM limited to AVX2 ({@code -XX:UseAVX=2}), 256 bits, the width of most desktop CPUs. Both must write the
 * scalar kernels' bytes ({@link VectorWidthSweep}).
 */
class VectorWidthsTest {

    @Test
    void preferredWidthMatchesScalar() {
        assertTrue(VectorWidthSweep.run(1) > 0);
    }

    @Test
    void avx2WidthMatchesScalar() throws IOException, InterruptedException {
        String arch = System.getProperty("os.arch");
        if (!arch.equals("amd64") && !arch.equals("x86_64")) return; // -XX:UseAVX is x86 only
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(List.of(java.toString(), "-XX:UseAVX=2", "--add-modules", "jdk.incubator.vector",
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                VectorWidthSweep.class.getName()))
                .redirectErrorStream(true).start();
        boolean done = p.waitFor(5, TimeUnit.MINUTES);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!done) p.destroyForcibly();
        assertTrue(done, "child JVM timed out: " + out);
        assertEquals(0, p.exitValue(), out);
        int bits = Kernels.vectorBits();
        assertTrue(out.contains("ok " + Math.min(bits, 256) + " "), "expected the sweep at 256 bits: " + out);
    }
}
