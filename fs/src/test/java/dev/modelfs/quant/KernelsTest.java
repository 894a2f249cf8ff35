package dev.modelfs.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The test JVM runs with {@code --add-modules jdk.incubator.vector} (root pom's argLine), as the launcher does:
 * the vector kernels must be the active ones here, or the kernel tests would silently test the scalar path twice.
 */
class KernelsTest {

    @Test
    void vectorKernelsAreActiveInTheTestJvm() {
        assertTrue(Kernels.vectorAvailable(), "Vector API unavailable: " + Kernels.describe());
        assertTrue(Kernels.vectorBits() >= 256, Kernels.describe());
        assertEquals(Kernels.Impl.VECTOR, Kernels.active(), Kernels.describe());
        assertTrue(Kernels.describe().startsWith("vector kernels ("), Kernels.describe());
    }
}
