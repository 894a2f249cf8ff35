package dev.modelfs.nfs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.serve.ServedTree;
import dev.modelfs.serve.StandardViews;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.tree.ModelView;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hostile packets of issue 21 replayed against a real {@link NfsServer} on loopback, over a real
 * store on disk: credentials that claim huge gid counts, records that claim gigabytes, names and paths
 * that claim gigabytes, peers outside {@code --allow}, and a call whose handling throws. Each must be
 * answered (or the connection closed) with the heap growing by at most {@link #HEAP_BOUND}.
 */
class HostileRpcTest {
    private static final long HEAP_BOUND = 64L << 20;
    private static final int MOUNT = 100005, NFS = 100003;

    @TempDir
    Path store;

    @Test
    void aCredentialClaimingHugeGidCountsIsDeniedWithinBoundedMemory() throws Exception {
        try (NfsServer server = start(AllowList.EVERYONE, StandardViews.all());
             RawRpc c = new RawRpc(server.address())) {
            long growth = heapPeakGrowth(() -> {
                c.send(RawRpc.call(7, NFS, 3, 0, RawRpc.authSysClaimingGids(0x7ffffff0), new byte[0]));
                assertDenied(c.reply(), 7);
                for (int i = 0; i < 15; i++) {
                    c.send(RawRpc.call(100 + i, NFS, 3, 0, RawRpc.authSysClaimingGids(0x18000000), new byte[0]));
                    assertDenied(c.reply(), 100 + i);
                }
                c.send(RawRpc.call(8, NFS, 3, 0, RawRpc.authSys(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17), new byte[0]));
                assertDenied(c.reply(), 8);                  // 17 gids: RFC 5531 allows 16
            });
            assertTrue(growth < HEAP_BOUND, "heap grew by " + growth + " bytes");
            c.send(RawRpc.call(9, NFS, 3, 0, RawRpc.authSys(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16), new byte[0]));
            assertEquals(RawRpc.SUCCESS, acceptStat(c.reply(), 9), "a sane call on the same connection is served");
        }
    }

    @Test
    void peersOutsideAllowAreClosedBeforeAnythingIsDecoded() throws Exception {
        try (NfsServer server = start(AllowList.parse(List.of("10.11.12.0/24")), StandardViews.all())) {
            long growth = heapPeakGrowth(() -> {
                for (int i = 0; i < 3; i++) {
                    try (RawRpc c = new RawRpc(server.address())) {
                        try {
                            c.send(RawRpc.call(1, NFS, 3, 0, RawRpc.authSysClaimingGids(0x18000000), new byte[0]));
                        } catch (IOException alreadyClosed) {
                            // the server may close before the bytes are written: that is the point
                        }
                        assertTrue(c.closedWithoutReply(), "a refused peer gets no reply, only a closed connection");
                    }
                }
            });
            assertTrue(growth < HEAP_BOUND, "heap grew by " + growth + " bytes");
        }
    }

    @Test
    void aRecordClaimingGigabytesClosesTheConnectionWithoutBufferingIt() throws Exception {
        try (NfsServer server = start(AllowList.EVERYONE, StandardViews.all());
             RawRpc c = new RawRpc(server.address())) {
            long growth = heapPeakGrowth(() -> {
                try {
                    c.sendRaw(ByteBuffer.allocate(4).putInt(0x7ffffff0).array());   // a first fragment of 2 GiB
                    byte[] mib = new byte[1 << 20];
                    for (int i = 0; i < 64; i++) {
                        c.sendRaw(mib);
                    }
                } catch (IOException closedByServer) {
                    // expected once the server has seen the marker
                }
                assertTrue(c.closedWithoutReply(), "the connection is closed");
            });
            assertTrue(growth < HEAP_BOUND, "heap grew by " + growth + " bytes");
        }
    }

    @Test
    void namesAndPathsClaimingGigabytesAreGarbageArgs() throws Exception {
        writeModel("tiny");
        try (NfsServer server = start(AllowList.EVERYONE, StandardViews.all());
             RawRpc c = new RawRpc(server.address())) {
            long growth = heapPeakGrowth(() -> {
                c.send(RawRpc.call(1, MOUNT, 3, 1, RawRpc.authSys(), new RawRpc.Xdr().i(0x7ffffff0).bytes()));
                assertEquals(RawRpc.GARBAGE_ARGS, acceptStat(c.reply(), 1), "MNT of a 2 GiB path");
                byte[] root = mount(c, "/");
                for (int i = 0; i < 5; i++) {
                    c.send(RawRpc.call(2 + i, NFS, 3, 3, RawRpc.authSys(),
                            new RawRpc.Xdr().opaque(root).i(0x18000000).bytes()));
                    assertEquals(RawRpc.GARBAGE_ARGS, acceptStat(c.reply(), 2 + i), "LOOKUP of a 384 MiB name");
                }
                c.send(RawRpc.call(9, NFS, 3, 1, RawRpc.authSys(), new RawRpc.Xdr().i(0x7ffffff0).bytes()));
                assertEquals(RawRpc.GARBAGE_ARGS, acceptStat(c.reply(), 9), "GETATTR of a 2 GiB handle");
            });
            assertTrue(growth < HEAP_BOUND, "heap grew by " + growth + " bytes");
        }
    }

    /** A view that fails the way a bug or an exhausted stack does: with an Error, not an exception. */
    private static final ModelView THROWS = (ctx, tables, tree) -> {
        throw new StackOverflowError("a view failed");
    };

    @Test
    void aCallWhoseHandlingThrowsIsAnsweredWithIoAndTheServerCarriesOn() throws Exception {
        writeModel("boom");
        List<ModelView> views = new ArrayList<>(StandardViews.all());
        views.add(THROWS);
        try (NfsServer server = start(AllowList.EVERYONE, views);
             RawRpc c = new RawRpc(server.address())) {
            byte[] model = mount(c, "/boom");
            for (int i = 0; i < 20; i++) {                   // more calls than worker threads
                c.send(RawRpc.call(10 + i, NFS, 3, 3, RawRpc.authSys(), new RawRpc.Xdr().opaque(model).string("ollama").bytes()));
                ByteBuffer r = c.reply();
                assertEquals(RawRpc.SUCCESS, acceptStat(r, 10 + i));
                assertEquals(Nfs3.ERR_IO, r.getInt(), "LOOKUP in a model whose listing throws: NFS3ERR_IO");
            }
            c.send(RawRpc.call(99, NFS, 3, 0, RawRpc.authSys(), new byte[0]));
            assertEquals(RawRpc.SUCCESS, acceptStat(c.reply(), 99));
        }
    }

    // ---- helpers ----

    private NfsServer start(AllowList allow, List<ModelView> views) throws IOException {
        Files.createDirectories(store.resolve("blobs"));
        Files.createDirectories(store.resolve("manifests"));
        ServedTree served = ServedTree.open(new OllamaStore(store), views, 8 << 20, 100);
        return NfsServer.start(served, new NfsServer.Config("127.0.0.1", 0, allow, 1000, 1000));
    }

    /** A model with only a config blob, at {@code manifests/registry.ollama.ai/library/NAME/latest}. */
    private void writeModel(String name) throws Exception {
        byte[] config = "{\"model_format\":\"gguf\"}".getBytes(StandardCharsets.UTF_8);
        String hex = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(config));
        Files.createDirectories(store.resolve("blobs"));
        Files.write(store.resolve("blobs/sha256-" + hex), config);
        Path m = store.resolve("manifests/registry.ollama.ai/library/" + name + "/latest");
        Files.createDirectories(m.getParent());
        Files.writeString(m, "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
                + "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" + hex
                + "\",\"size\":" + config.length + "},\"layers\":[]}");
    }

    private static byte[] mount(RawRpc c, String path) throws IOException {
        c.send(RawRpc.call(0x4d4e54, MOUNT, 3, 1, RawRpc.authSys(), new RawRpc.Xdr().string(path).bytes()));
        ByteBuffer r = c.reply();
        assertEquals(RawRpc.SUCCESS, acceptStat(r, 0x4d4e54));
        assertEquals(0, r.getInt(), "MNT " + path);
        byte[] fh = new byte[r.getInt()];
        r.get(fh);
        return fh;
    }

    private static void assertDenied(ByteBuffer r, int xid) {
        assertEquals(xid, r.getInt(), "xid");
        assertEquals(RawRpc.REPLY, r.getInt());
        assertEquals(RawRpc.MSG_DENIED, r.getInt(), "MSG_DENIED");
        assertEquals(RawRpc.AUTH_ERROR, r.getInt(), "AUTH_ERROR");
        assertEquals(RawRpc.AUTH_BADCRED, r.getInt(), "AUTH_BADCRED");
    }

    /** Reads an accepted reply's header; returns its accept_stat (the results follow in {@code r}). */
    private static int acceptStat(ByteBuffer r, int xid) {
        assertEquals(xid, r.getInt(), "xid");
        assertEquals(RawRpc.REPLY, r.getInt());
        assertEquals(RawRpc.MSG_ACCEPTED, r.getInt(), "MSG_ACCEPTED");
        r.getInt();                                          // verifier flavor
        int verifierLength = r.getInt();
        r.position(r.position() + ((verifierLength + 3) & ~3));
        return r.getInt();
    }

    @FunctionalInterface
    private interface Body {
        void run() throws Exception;
    }

    /** How far the heap's peak rose above its level before {@code body} (all heap pools, after a GC). */
    private static long heapPeakGrowth(Body body) throws Exception {
        List<MemoryPoolMXBean> heap = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP && p.isValid()).toList();
        System.gc();
        long before = 0;
        for (MemoryPoolMXBean p : heap) {
            before += p.getUsage().getUsed();
            p.resetPeakUsage();
        }
        body.run();
        long peak = 0;
        for (MemoryPoolMXBean p : heap) {
            peak += p.getPeakUsage().getUsed();
        }
        return peak - before;
    }
}
