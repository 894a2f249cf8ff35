package dev.modelfs.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** {@link ReadAheadWindow} without a mount: which setting names a file system, and a window it cannot set. */
class ReadAheadWindowTest {
    /** {@code stat -c %Hd:%Ld}: the device numbers as coreutils decodes them (an oracle independent of the class). */
    private static String devOf(Path p) throws Exception {
        Process stat = new ProcessBuilder("stat", "-c", "%Hd:%Ld", p.toString()).redirectErrorStream(true).start();
        String out = new String(stat.getInputStream().readAllBytes()).trim();
        assertEquals(0, stat.waitFor(), out);
        return out;
    }

    @Test
    void theSettingIsTheBackingDeviceNamedAfterTheFileSystemsDeviceNumbers() throws Exception {
        for (Path p : new Path[] {Path.of("/"), Path.of("/proc"), Path.of("/dev/shm")}) {
            assertEquals(Path.of("/sys/class/bdi", devOf(p), "read_ahead_kb"), ReadAheadWindow.knob(p), p.toString());
        }
    }

    @Test
    void zeroLeavesTheKernelsWindowAndAFileSystemWithoutOneIsRefusedQuietly() {
        assertFalse(ReadAheadWindow.apply(Path.of("/proc"), 0));
        assertFalse(ReadAheadWindow.apply(Path.of("/proc"), 1024), "/proc has no backing device to set");
        assertTrue(ReadAheadWindow.current(Path.of("/proc")).isEmpty());
    }
}
