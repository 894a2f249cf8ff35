package dev.modelfs.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.serve.ServedTree;
import dev.modelfs.serve.StandardViews;
import dev.modelfs.serve.TinyGgufStore;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.tree.FileNode;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import jnr.ffi.Pointer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import ru.serce.jnrfuse.struct.FuseFileInfo;

/**
 * How a ring entry answers a {@code READ} ({@link RingEntries}, the code behind {@code --io-uring}), without a kernel:
 * the warm-up's synthetic requests go through the same {@code serve} as the kernel's. A whole-blob file read in 4 KiB
 * and 128 KiB requests gives its blob's bytes (the blob on disk, found by the SHA-256 of what was read, is the oracle),
 * a read across the end is short, one past it empty, an unknown handle gets EBADF, and the warm-up's private policy reports
 * nothing while a client's read is reported. The rings themselves are tested on a real mount ({@code FuseIoUringTest}).
 */
class RingEntriesTest {
    @TempDir
    Path tmp;

    @Test
    void aReadIsAnsweredIntoTheEntrysPayloadWithTheBlobsBytes() throws Exception {
        OllamaStore store = TinyGgufStore.create(tmp.resolve("store"));
        CountingTelemetry counting = new CountingTelemetry();
        try (ServedTree served = ServedTree.open(store, StandardViews.all(), 8 << 20, 60_000, counting);
             Arena arena = Arena.ofConfined()) {
            ModelFs fs = new ModelFs(served.tree(), served.warmupPolicy(0, 0));     // the warm-up's private file system
            Path rel = dev.modelfs.warmup.KernelWarmup.plainFilesToRead(served.tree(), 16).getFirst();
            String path = "/" + rel;
            long size = ((FileNode) fs.resolve(path)).size();
            MemorySegment fi = arena.allocate(FuseStructs.FILE_INFO);
            FuseFileInfo info = FuseFileInfo.of(Pointer.wrap(jnr.ffi.Runtime.getSystemRuntime(), fi.address()));
            assertEquals(0, fs.open(path, info));
            long fh = fi.get(ValueLayout.JAVA_LONG, FuseStructs.FI_FH);
            RingEntries ring = RingEntries.forWarmup(fs, arena);
            try {
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                for (long off = 0; off < size; ) {
                    int want = off % 3 == 0 ? 4096 : (int) FuseReadWarmup.LARGE;
                    long n = ring.warmRead(fh, off, want);
                    assertTrue(n > 0 && n <= want, "read at " + off + ": " + n);
                    got.write(ring.payload(0).asSlice(0, n).toArray(ValueLayout.JAVA_BYTE));
                    off += n;
                }
                byte[] bytes = got.toByteArray();
                assertEquals(size, bytes.length);
                Path blob = tmp.resolve("store/blobs/sha256-"
                        + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)));
                assertArrayEquals(Files.readAllBytes(blob), bytes, "the file is its blob");

                assertEquals(100, ring.warmRead(fh, size - 100, 4096), "a read across the end is short");
                assertArrayEquals(java.util.Arrays.copyOfRange(bytes, bytes.length - 100, bytes.length),
                        ring.payload(0).asSlice(0, 100).toArray(ValueLayout.JAVA_BYTE));
                assertEquals(0, ring.warmRead(fh, size, 4096), "one past it is empty");
                assertEquals(-9, ring.warmRead(fh + 1000, 0, 4096), "an unknown handle: EBADF");
                assertEquals(0, counting.reads.get() + counting.ringRequests.get(), "the warm-up's policy reports nothing");
            } finally {
                fs.release(path, info);
                ring.release();
            }
            ModelFs served1 = new ModelFs(served.tree(), served.policy(0, 0));             // a client's file system
            assertEquals(0, served1.open(path, info));
            RingEntries clients = RingEntries.forWarmup(served1, arena);
            try {
                assertEquals(4096, clients.warmRead(fi.get(ValueLayout.JAVA_LONG, FuseStructs.FI_FH), 0, 4096));
                assertEquals(1, counting.reads.get(), "a client's read is reported");
                assertEquals(1, counting.ringRequests.get(), "and its ring request");
            } finally {
                served1.release(path, info);
                clients.release();
            }
        }
    }
}
