package dev.modelfs.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.telemetry.FileKind;
import dev.modelfs.telemetry.Telemetry;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The kernel's rules for passthrough opens (one backing file per open inode, a registration per blob while it is
 * used), against a device that records what it was asked.
 */
class PassthroughOpensTest {
    /** Records registrations; answers ids from 10 on, or {@code failWith} once set. */
    static final class RecordingDevice implements PassthroughOpens.Device {
        final List<Integer> registeredFds = new ArrayList<>();
        final List<Integer> unregistered = new ArrayList<>();
        int next = 10;
        int failWith;

        @Override
        public int register(int blobFd) {
            registeredFds.add(blobFd);
            return failWith != 0 ? failWith : next++;
        }

        @Override
        public int unregister(int id) {
            unregistered.add(id);
            return 0;
        }
    }

    static final class Counting implements Telemetry {
        int opens;

        @Override public void read(FileKind kind, long bytes, long nanos) { }
        @Override public void conversion(long cpuNanos) { }
        @Override public void error(String errno, String model) { }
        @Override public void nfsCall(int procedure, InetAddress client) { }
        @Override public void kernelPassthroughOpen() {
            opens++;
        }
    }

    final RecordingDevice device = new RecordingDevice();
    final Counting telemetry = new Counting();
    final PassthroughOpens opens = new PassthroughOpens(telemetry);

    @Test
    void nothingPassesThroughBeforeInitAcceptedIt() {
        assertEquals(0, opens.admit("/a/model.gguf", "blobA", false, () -> 3));
        assertTrue(device.registeredFds.isEmpty());
        opens.closed("/a/model.gguf", 0);
        assertEquals(0, opens.openPaths());
    }

    @Test
    void aBlobIsRegisteredOnceWhileOpenAndDroppedWithItsLastFile() {
        opens.enable(device);
        int a1 = opens.admit("/a/model.gguf", "blobA", false, () -> 3);
        int a2 = opens.admit("/a/model.gguf", "blobA", false, () -> 4);
        int b = opens.admit("/b/model.gguf", "blobA", false, () -> 5);      // another path, the same blob
        assertTrue(a1 > 0);
        assertEquals(a1, a2);
        assertEquals(a1, b);
        assertEquals(List.of(3), device.registeredFds, "one registration, with the first open's descriptor");
        assertEquals(3, telemetry.opens);

        opens.closed("/a/model.gguf", a1);
        opens.closed("/b/model.gguf", b);
        assertTrue(device.unregistered.isEmpty(), "one file still uses it");
        opens.closed("/a/model.gguf", a2);
        assertEquals(List.of(a1), device.unregistered);
        assertEquals(0, opens.registered());
        assertEquals(0, opens.openPaths());

        int again = opens.admit("/a/model.gguf", "blobA", false, () -> 6);
        assertNotEquals(a1, again, "registered anew");
        assertEquals(List.of(3, 6), device.registeredFds);
    }

    @Test
    void aPathWhoseBytesChangedUnderAPassthroughReaderIsBusyUntilItCloses() {
        opens.enable(device);
        int old = opens.admit("/m/model.gguf", "blobA", false, () -> 3);
        assertEquals(PassthroughOpens.BUSY, opens.admit("/m/model.gguf", "blobB", false, () -> 4), "the tag was re-pulled");
        assertEquals(PassthroughOpens.BUSY, opens.admit("/m/model.gguf", null, false, () -> 4), "now a composed file");
        assertEquals(List.of(3), device.registeredFds, "nothing registered for a refused open");
        opens.closed("/m/model.gguf", old);
        int now = opens.admit("/m/model.gguf", "blobB", false, () -> 4);
        assertTrue(now > 0, "the old reader is gone: the new blob passes through");
        assertEquals(List.of(old), device.unregistered);
    }

    @Test
    void anOpenWaitsForTheReleaseOfAFileClosedJustBefore() throws Exception {
        PassthroughOpens slow = new PassthroughOpens(telemetry, 30_000_000_000L);
        slow.enable(device);
        int old = slow.admit("/m/model.gguf", "blobA", false, () -> 3);
        int[] got = {Integer.MIN_VALUE};
        Thread t = new Thread(() -> got[0] = slow.admit("/m/model.gguf", "blobB", false, () -> 4));
        t.start();
        while (!slow.waiting()) {
            Thread.sleep(1);
        }
        assertEquals(PassthroughOpens.BUSY, slow.admit("/m/model.gguf", "blobC", false, () -> 5),
                "while one open waits, another is refused at once: waits cannot hold every worker");
        assertTrue(t.isAlive(), "the first still waits");
        slow.closed("/m/model.gguf", old);                            // the RELEASE of the old file arrives
        t.join(10_000);
        assertTrue(got[0] > 0, "the waiting open passes through to the new blob: " + got[0]);
        assertEquals(List.of(old), device.unregistered);
    }

    @Test
    void aPathOpenWithoutPassthroughStaysServedHereUntilItsFilesClose() {
        opens.enable(device);
        assertEquals(0, opens.admit("/m/model.gguf", null, false, () -> 3), "not one whole blob");
        assertEquals(0, opens.admit("/m/model.gguf", "blobA", false, () -> 4), "the inode is open without passthrough");
        assertTrue(device.registeredFds.isEmpty());
        opens.closed("/m/model.gguf", 0);
        opens.closed("/m/model.gguf", 0);
        assertTrue(opens.admit("/m/model.gguf", "blobA", false, () -> 4) > 0);
    }

    @Test
    void anODirectOpenIsServedHereUnlessItsPathAlreadyPassesThrough() {
        opens.enable(device);
        assertEquals(0, opens.admit("/a/model.gguf", "blobA", true, () -> 3), "O_DIRECT: served here");
        assertEquals(0, opens.admit("/a/model.gguf", "blobA", false, () -> 4), "the inode is open without passthrough");
        assertTrue(device.registeredFds.isEmpty());
        int b = opens.admit("/b/model.gguf", "blobB", false, () -> 5);
        assertTrue(b > 0);
        assertEquals(b, opens.admit("/b/model.gguf", "blobB", true, () -> 6), "the inode passes through: so must this open");
    }

    @Test
    void aFailedRegistrationTurnsPassthroughOffForNewBlobsOnly() {
        opens.enable(device);
        int a = opens.admit("/a/model.gguf", "blobA", false, () -> 3);
        device.failWith = -1;                                        // EPERM
        assertEquals(0, opens.admit("/b/model.gguf", "blobB", false, () -> 4));
        assertEquals(0, opens.admit("/c/model.gguf", "blobC", false, () -> 5));
        assertEquals(List.of(3, 4), device.registeredFds, "no second attempt after a failure");
        assertEquals(a, opens.admit("/a/model.gguf", "blobA", false, () -> 6), "an open inode keeps its backing file");
        assertEquals(2, telemetry.opens);
    }
}
