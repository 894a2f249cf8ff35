package dev.modelfs.quant.ggml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * A JVM that runs the scalar kernels never loads the Vector API kernel classes: without the module
 * {@code jdk.incubator.vector} every type still dequantizes (and asking for a VECTOR kernel fails clearly), and with
 * the module but {@code -Dmodelfs.kernels=scalar} no class of the GGML vector kernels is loaded either.
 */
class VectorClassesLoadLazilyTest {
    private static final List<String> VECTOR_KERNEL_CLASSES =
            List.of("GgmlVectorKernels", "VectorGgmlKernel", "GgmlVectorLoops", "VectorShapes");

    private static List<String> runJvm(String... flags) throws IOException, InterruptedException {
        final List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of(flags));
        cmd.addAll(List.of("-verbose:class", "-cp", System.getProperty("java.class.path"),
                ScalarOnlyJvmMain.class.getName()));
        final Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
        assertEquals(0, p.exitValue(), out);
        return out.lines().toList();
    }

    private static void assertNoVectorKernelClass(List<String> lines) {
        for (String line : lines) {
            for (String c : VECTOR_KERNEL_CLASSES) {
                assertTrue(!line.contains("dev.modelfs.quant.ggml." + c + " "), "loaded: " + line);
            }
        }
        assertTrue(lines.contains("ok"), String.join("\n", lines));
    }

    @Test
    void withoutTheModule() throws Exception {
        final List<String> lines = runJvm();
        assertNoVectorKernelClass(lines);
        assertTrue(lines.contains("kernels=SCALAR"));
        assertTrue(lines.stream().noneMatch(l -> l.contains("jdk.incubator.vector.")), "a Vector API class was loaded");
    }

    @Test
    void withTheModuleForcedScalar() throws Exception {
        final List<String> lines = runJvm("--add-modules", "jdk.incubator.vector", "-Dmodelfs.kernels=scalar");
        assertNoVectorKernelClass(lines);
        assertTrue(lines.contains("kernels=SCALAR"));
    }

    @Test
    void withTheModuleTheVectorKernelsLoad() throws Exception {
        final List<String> lines = runJvm("--add-modules", "jdk.incubator.vector");
        assertTrue(lines.contains("kernels=VECTOR"));
        assertTrue(lines.stream().anyMatch(l -> l.contains("dev.modelfs.quant.ggml.GgmlVectorLoops ")),
                "the check would not see the classes: " + String.join("\n", lines));
    }
}
